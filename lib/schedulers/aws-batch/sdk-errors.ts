/**
 * Maps AWS SDK errors (Batch, CloudWatch Logs) to scheduler errors. The SDK has already retried throttling and
 * server errors by the time an error reaches here, so what arrives is final for this request.
 *
 * @module
 */
import { isAccessDeniedError, isThrottlingError, TxsError } from '../../specs/index.js';
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
}

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

/**
 * True when AWS refused the call for lack of permission ({@link isAccessDeniedError}), or Batch said so in a
 * `ClientException`'s message.
 */
export function isAccessDenied(error: unknown): boolean {
  if (isAccessDeniedError(error)) return true;
  const { name = '', message = '' } = shapeOf(error);
  return name === 'ClientException' && /not authorized to perform|access ?denied/i.test(message);
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
  if (isThrottlingError(error)) {
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
