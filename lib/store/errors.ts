/**
 * Errors of the store layer. Each extends the project-wide `TxsError`, so the HTTP layer maps them by
 * `code`; the DynamoDB SDK error rides in `cause`. `retryable` says whether the same call may succeed later.
 *
 * @module
 */
import { type ApiErrorCode, TxsError } from '../specs/index.js';

/** Base class of store failures. */
export class StoreError extends TxsError {
  readonly code: ApiErrorCode = 'StoreError';
  /** True when trying the same call again later may succeed. */
  readonly retryable: boolean = false;
}

/**
 * DynamoDB throttled the request or failed on its side (5xx, network) and the SDK's own retries were
 * exhausted. Retry later with back-off.
 */
export class StoreUnavailableError extends StoreError {
  override readonly code = 'StoreUnavailable';
  override readonly retryable = true;
}

/**
 * A transition kept losing optimistic-concurrency races (many events for one app at once) and gave up.
 * Nothing was written by this call; delivering the event again is safe.
 */
export class StoreConflictError extends StoreError {
  override readonly code = 'StoreConflict';
  override readonly retryable = true;
}

/** The table does not exist: the stack is not deployed in this account/region or the table name is wrong. */
export class StoreTableNotFoundError extends StoreError {
  override readonly code = 'StoreTableNotFound';
  constructor(
    readonly tableName: string,
    options?: { cause?: unknown },
  ) {
    super(
      `DynamoDB table '${tableName}' does not exist. Deploy the stack, or point the table name setting ` +
        'at the app record table in this account and region',
      options,
    );
  }
}

/**
 * An update would make an app record larger than DynamoDB's 400 KB item limit (for example very large
 * replica statuses). Nothing was written.
 */
export class RecordTooLargeError extends StoreError {
  override readonly code = 'RecordTooLarge';
}

/**
 * `completeIdempotencyKey` found no reservation to complete (it expired or was released), or the key is
 * already bound to a different handle.
 */
export class IdempotencyReservationError extends StoreError {
  override readonly code = 'IdempotencyReservation';
}

/** Error names AWS throttles with (the AWS SDK's list). */
const THROTTLING_ERROR_NAMES: ReadonlySet<string> = new Set([
  'BandwidthLimitExceeded',
  'EC2ThrottledException',
  'LimitExceededException',
  'PriorRequestNotComplete',
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'RequestThrottled',
  'RequestThrottledException',
  'SlowDown',
  'ThrottledException',
  'Throttling',
  'ThrottlingException',
  'TooManyRequestsException',
  'TransactionInProgressException',
]);

/** Error names of a failure on DynamoDB's side or of a call that timed out. */
const TRANSIENT_ERROR_NAMES: ReadonlySet<string> = new Set([
  'TimeoutError',
  'RequestTimeout',
  'RequestTimeoutException',
  'InternalServerError',
  'ServiceUnavailable',
]);

/** HTTP statuses the AWS SDK retries. */
const TRANSIENT_STATUS_CODES: ReadonlySet<number> = new Set([500, 502, 503, 504]);

/** Node.js error codes of a request that got no response: the endpoint unreachable or the connection lost. */
const NETWORK_ERROR_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EAI_AGAIN',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

interface SdkErrorLike {
  name?: unknown;
  code?: unknown;
  message?: unknown;
  $metadata?: { httpStatusCode?: unknown };
  $retryable?: unknown;
}

/**
 * True when the same DynamoDB call may succeed if tried again: throttling, a transient error or status, or a
 * request that got no response. The SDK client retries these itself; {@link toStoreError} reports them, once
 * the SDK's retries are spent, as {@link StoreUnavailableError}.
 */
export function isTransientFailure(error: unknown): boolean {
  const failure = (typeof error === 'object' && error !== null ? error : {}) as SdkErrorLike;
  const status = failure.$metadata?.httpStatusCode;
  return (
    failure.$retryable !== undefined ||
    (typeof failure.name === 'string' &&
      (THROTTLING_ERROR_NAMES.has(failure.name) || TRANSIENT_ERROR_NAMES.has(failure.name))) ||
    (typeof status === 'number' && TRANSIENT_STATUS_CODES.has(status)) ||
    (typeof failure.code === 'string' && NETWORK_ERROR_CODES.has(failure.code))
  );
}

/** True when `error` is DynamoDB's ConditionalCheckFailedException. */
export function isConditionalCheckFailed(error: unknown): boolean {
  return (error as SdkErrorLike | null)?.name === 'ConditionalCheckFailedException';
}

/**
 * Wraps an SDK error from `operation` in the matching store error: {@link StoreTableNotFoundError},
 * {@link StoreUnavailableError} for throttling, 5xx and network failures, else a non-retryable
 * {@link StoreError}. Store errors pass through unchanged.
 *
 * @example
 * ```ts
 * try { await client.send(command); } catch (e) { throw toStoreError(e, 'GetItem', tableName); }
 * ```
 */
export function toStoreError(error: unknown, operation: string, tableName: string): TxsError {
  if (error instanceof TxsError) return error;
  const sdk = (typeof error === 'object' && error !== null ? error : {}) as SdkErrorLike;
  const name = typeof sdk.name === 'string' ? sdk.name : 'Error';
  const detail = typeof sdk.message === 'string' && sdk.message !== '' ? `${name}: ${sdk.message}` : name;
  if (name === 'ResourceNotFoundException') return new StoreTableNotFoundError(tableName, { cause: error });
  const status = sdk.$metadata?.httpStatusCode;
  const retryable =
    isTransientFailure(error) ||
    name === 'TransactionConflictException' ||
    (typeof status === 'number' && status >= 500);
  if (retryable) {
    return new StoreUnavailableError(
      `DynamoDB ${operation} on '${tableName}' failed after retries (${detail}). Try again shortly`,
      { cause: error },
    );
  }
  return new StoreError(`DynamoDB ${operation} on '${tableName}' failed (${detail})`, { cause: error });
}
