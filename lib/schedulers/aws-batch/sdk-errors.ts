/**
 * Maps AWS SDK errors (Batch, CloudWatch Logs) to scheduler errors. The SDK has already retried throttling and
 * server errors by the time an error reaches here, so what arrives is final for this request.
 *
 * @module
 */
import { TxsError } from '../../specs/index.js';
import { BackendAccessDeniedError, BackendError, sdkConfigurationError } from '../errors.js';

/** The AWS service and action a call was for, e.g. `batch` / `SubmitJob`. */
export interface SdkCall {
  service: 'batch' | 'logs';
  action: string;
}

interface SdkErrorShape {
  name?: string;
  message?: string;
  $fault?: 'client' | 'server';
  $metadata?: { httpStatusCode?: number; attempts?: number };
  $retryable?: { throttling?: boolean };
}

const ACCESS_DENIED_NAMES = new Set([
  'AccessDeniedException',
  'AccessDenied',
  'UnauthorizedOperation',
  'UnrecognizedClientException',
  'ExpiredTokenException',
  'InvalidSignatureException',
]);

const THROTTLING_NAMES = new Set([
  'ThrottlingException',
  'Throttling',
  'TooManyRequestsException',
  'RequestLimitExceeded',
  'LimitExceededException',
]);

function shapeOf(error: unknown): SdkErrorShape {
  return error !== null && typeof error === 'object' ? (error as SdkErrorShape) : {};
}

/** The error's name (e.g. `ClientException`), or undefined. */
export function sdkErrorName(error: unknown): string | undefined {
  return shapeOf(error).name;
}

/** True for Batch's `ClientException` (HTTP 400: bad request, unknown resource). */
export function isClientException(error: unknown): boolean {
  return shapeOf(error).name === 'ClientException';
}

/** True when AWS refused the call for lack of permission. */
export function isAccessDenied(error: unknown): boolean {
  const { name = '', message = '', $metadata } = shapeOf(error);
  if (ACCESS_DENIED_NAMES.has(name) || $metadata?.httpStatusCode === 403) return true;
  return name === 'ClientException' && /not authorized to perform|access ?denied/i.test(message);
}

/** True when the call was throttled. */
export function isThrottling(error: unknown): boolean {
  const { name = '', $metadata, $retryable } = shapeOf(error);
  return THROTTLING_NAMES.has(name) || $metadata?.httpStatusCode === 429 || $retryable?.throttling === true;
}

/**
 * Turns an SDK error into a scheduler error naming the AWS action:
 * - access denied → {@link BackendAccessDeniedError} telling which permission to grant;
 * - throttled (after the SDK's retries), server faults and network failures → retryable {@link BackendError};
 * - anything else the service rejected → non-retryable {@link BackendError} with AWS's message.
 * Errors of this project pass through unchanged.
 *
 * @example
 * ```ts
 * try { await client.send(cmd); } catch (e) { throw toSchedulerError(e, { service: 'batch', action: 'SubmitJob' }); }
 * ```
 */
export function toSchedulerError(error: unknown, call: SdkCall): Error {
  if (error instanceof TxsError) return error;
  const { name = 'Error', message = String(error), $fault, $metadata } = shapeOf(error);
  const action = `${call.service}:${call.action}`;
  const unconfigured = sdkConfigurationError(error, action);
  if (unconfigured) return unconfigured;
  if (isAccessDenied(error)) {
    return new BackendAccessDeniedError(
      `AWS denied ${action} (${name}: ${message}). Grant ${action} to the IAM role torchx-serverless runs as`,
      { cause: error },
    );
  }
  if (isThrottling(error)) {
    const attempts = $metadata?.attempts ?? 1;
    return new BackendError(
      `AWS throttled ${action} (${name}) after ${attempts} attempt(s); try again later`,
      true,
      { cause: error },
    );
  }
  const status = $metadata?.httpStatusCode;
  const serverSide = $fault === 'server' || (status !== undefined && status >= 500) || status === undefined;
  if (serverSide) {
    return new BackendError(`${action} failed on the AWS side (${name}: ${message}); try again later`, true, {
      cause: error,
    });
  }
  return new BackendError(`${action} was rejected by AWS (${name}: ${message})`, false, { cause: error });
}
