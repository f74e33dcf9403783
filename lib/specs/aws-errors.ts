/**
 * The one classification of AWS SDK errors: throttling, access denied, transient (timeouts, 5xx) and network
 * failures. The store, the schedulers and tracing all ask these functions, so a name added here counts
 * everywhere. Pure functions of an error's `name`, `code`, `$metadata.httpStatusCode` and `$retryable` (the
 * fields AWS SDK v3 errors carry): no SDK import, so every layer may use them.
 *
 * The throttling, transient and network lists are the AWS SDK's own (`@smithy/core/retry`'s
 * `THROTTLING_ERROR_CODES`, `TRANSIENT_ERROR_CODES`, `TRANSIENT_ERROR_STATUS_CODES`,
 * `NODEJS_TIMEOUT_ERROR_CODES` and `NODEJS_NETWORK_ERROR_CODES`); a unit test checks they still classify as
 * the SDK does. They are not imported: `@smithy/core/retry` brings the SDK's retry middleware with it.
 *
 * @module
 */

/** Error names AWS throttles with (the AWS SDK's `THROTTLING_ERROR_CODES`). */
export const THROTTLING_ERROR_NAMES: ReadonlySet<string> = new Set([
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

/**
 * Error names of a caller AWS refused: no permission (IAM), or credentials it does not accept (unknown,
 * expired or badly signed). Every service's spelling of it that the schedulers have met.
 */
export const ACCESS_DENIED_ERROR_NAMES: ReadonlySet<string> = new Set([
  'AccessDenied',
  'AccessDeniedException',
  'AuthorizationError',
  'ExpiredTokenException',
  'InvalidSignatureException',
  'NotAuthorized',
  'UnauthorizedOperation',
  'UnrecognizedClientException',
]);

/** Error names of a call that timed out (the AWS SDK's `TRANSIENT_ERROR_CODES`). */
const TRANSIENT_ERROR_NAMES: ReadonlySet<string> = new Set([
  'TimeoutError',
  'RequestTimeout',
  'RequestTimeoutException',
]);

/** HTTP statuses the AWS SDK retries as transient (`TRANSIENT_ERROR_STATUS_CODES`). */
const TRANSIENT_STATUS_CODES: ReadonlySet<number> = new Set([500, 502, 503, 504]);

/**
 * Node.js error codes of a request that got no answer: the connection refused, reset or timed out, or the
 * host not found or unreachable (the AWS SDK's `NODEJS_TIMEOUT_ERROR_CODES` and `NODEJS_NETWORK_ERROR_CODES`).
 */
const NETWORK_ERROR_CODES: ReadonlySet<string> = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** The fields of an AWS SDK v3 error this classification reads. */
interface AwsErrorFields {
  name?: unknown;
  code?: unknown;
  cause?: unknown;
  $metadata?: { httpStatusCode?: unknown } | undefined;
  $retryable?: { throttling?: unknown } | undefined;
}

function fieldsOf(error: unknown): AwsErrorFields {
  return error !== null && typeof error === 'object' ? (error as AwsErrorFields) : {};
}

/** The error's `name` (e.g. `ThrottlingException`), or an empty string. */
export function awsErrorName(error: unknown): string {
  const { name } = fieldsOf(error);
  return typeof name === 'string' ? name : '';
}

/** The HTTP status AWS answered with, or undefined when the request got no answer. */
export function awsErrorStatus(error: unknown): number | undefined {
  const status = fieldsOf(error).$metadata?.httpStatusCode;
  return typeof status === 'number' ? status : undefined;
}

/** True when AWS throttled the call: HTTP 429, a throttling name, or the SDK's `$retryable.throttling` trait. */
export function isThrottlingError(error: unknown): boolean {
  return (
    awsErrorStatus(error) === 429 ||
    THROTTLING_ERROR_NAMES.has(awsErrorName(error)) ||
    fieldsOf(error).$retryable?.throttling === true
  );
}

/** True when AWS refused the caller: HTTP 403 or an access-denied or rejected-credentials name. */
export function isAccessDeniedError(error: unknown): boolean {
  return awsErrorStatus(error) === 403 || ACCESS_DENIED_ERROR_NAMES.has(awsErrorName(error));
}

/**
 * True when the request got no answer (connection refused, reset or timed out; host unknown or
 * unreachable), judged by the Node.js error `code` of the error or of its causes.
 */
export function isNetworkError(error: unknown, depth = 0): boolean {
  const { code, cause } = fieldsOf(error);
  if (typeof code === 'string' && NETWORK_ERROR_CODES.has(code)) return true;
  return cause !== undefined && depth < 10 && isNetworkError(cause, depth + 1);
}

/**
 * True when the same call may succeed later though it was not throttled, as the AWS SDK's retry strategy
 * judges it: the error's retryable trait, a timeout, HTTP 500/502/503/504, or a {@link isNetworkError network
 * failure}.
 */
export function isTransientError(error: unknown): boolean {
  const fields = fieldsOf(error);
  const status = awsErrorStatus(error);
  if (awsErrorName(error) === 'AbortError') return false;
  return (
    fields.$retryable !== undefined ||
    TRANSIENT_ERROR_NAMES.has(awsErrorName(error)) ||
    (status !== undefined && TRANSIENT_STATUS_CODES.has(status)) ||
    isNetworkError(error)
  );
}

/** True when trying the same call again later may succeed: {@link isThrottlingError} or {@link isTransientError}. */
export function isRetryableAwsError(error: unknown): boolean {
  return isThrottlingError(error) || isTransientError(error);
}
