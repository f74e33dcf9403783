/**
 * Errors of the store layer. Each extends the project-wide `TxsError`, so the HTTP layer maps them by
 * `code`; the DynamoDB SDK error rides in `cause`. `retryable` says whether the same call may succeed later.
 *
 * @module
 */
import {
  type ApiErrorCode,
  awsErrorName,
  awsErrorStatus,
  isAccessDeniedError,
  isRetryableAwsError,
  TxsError,
} from '../specs/index.js';

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
 * `idempotency.complete` found no reservation to complete (it expired or was released), or the key is
 * already bound to a different handle.
 */
export class IdempotencyReservationError extends StoreError {
  override readonly code = 'IdempotencyReservation';
}

/** True when `error` is DynamoDB's ConditionalCheckFailedException. */
export function isConditionalCheckFailed(error: unknown): boolean {
  return awsErrorName(error) === 'ConditionalCheckFailedException';
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
  const name = awsErrorName(error) || 'Error';
  const message = (error as { message?: unknown } | null)?.message;
  const detail = typeof message === 'string' && message !== '' ? `${name}: ${message}` : name;
  if (name === 'ResourceNotFoundException') return new StoreTableNotFoundError(tableName, { cause: error });
  const status = awsErrorStatus(error);
  const retryable =
    isRetryableAwsError(error) ||
    name === 'TransactionConflictException' ||
    (typeof status === 'number' && status >= 500);
  if (isAccessDeniedError(error)) {
    return new StoreError(
      `DynamoDB denied ${operation} on '${tableName}' (${detail}). Grant dynamodb:${operation} on the table ` +
        'to the role torchx-serverless runs as, or check its credentials',
      { cause: error },
    );
  }
  if (retryable) {
    return new StoreUnavailableError(
      `DynamoDB ${operation} on '${tableName}' failed after retries (${detail}). Try again shortly`,
      { cause: error },
    );
  }
  return new StoreError(`DynamoDB ${operation} on '${tableName}' failed (${detail})`, { cause: error });
}
