/**
 * Classifies AWS SDK errors from SageMaker and CloudWatch Logs and turns them into the scheduler errors
 * users see. SDK v3 errors carry `name`, `$fault`, `$retryable` and `$metadata.httpStatusCode`.
 *
 * @module
 */
import { awsErrorName, awsErrorStatus, isAccessDeniedError, isThrottlingError } from '../../specs/index.js';
import {
  BackendAccessDeniedError,
  BackendConflictError,
  BackendError,
  BackendQuotaExceededError,
  BackendValidationError,
  sdkConfigurationError,
} from '../errors.js';

interface SdkErrorShape {
  name?: unknown;
  message?: unknown;
  $fault?: unknown;
}

function shapeOf(error: unknown): SdkErrorShape {
  return error !== null && typeof error === 'object' ? (error as SdkErrorShape) : {};
}

/** The error's `name` (e.g. `ThrottlingException`), or an empty string. */
export const sdkErrorName = awsErrorName;

/** The one AWS throttling classification, as the scheduler's retry loop asks it. */
export { isThrottlingError };

function messageOf(error: unknown): string {
  const message = shapeOf(error).message;
  return typeof message === 'string' ? message : String(error);
}

const statusOf = awsErrorStatus;

/**
 * True when SageMaker or CloudWatch Logs says the resource does not exist: `ResourceNotFound`,
 * `ResourceNotFoundException`, or the `ValidationException` "Requested resource not found" that
 * DescribeTrainingJob answers for an unknown job name.
 */
export function isNotFoundError(error: unknown): boolean {
  const name = sdkErrorName(error);
  if (name === 'ResourceNotFound' || name === 'ResourceNotFoundException') return true;
  return name === 'ValidationException' && /requested resource not found/i.test(messageOf(error));
}

/**
 * Converts an SDK error into the scheduler error users see; scheduler errors pass through unchanged.
 *
 * - access denied → {@link BackendAccessDeniedError} naming the IAM action (e.g. `sagemaker:CreateTrainingJob`);
 * - throttling (after the SDK's and the scheduler's retries) → retryable {@link BackendError};
 * - `ResourceInUse` → {@link BackendConflictError}; `ResourceLimitExceeded` → {@link BackendQuotaExceededError};
 * - `ValidationException` on a write → {@link BackendValidationError};
 * - anything else → {@link BackendError}, retryable for server faults.
 *
 * @param action the IAM action of the failed call, e.g. `sagemaker:DescribeTrainingJob`
 * @param target what the call was about, e.g. `training job train-x1`
 */
export function toSchedulerError(error: unknown, action: string, target: string): Error {
  if (error instanceof BackendError || error instanceof BackendAccessDeniedError) return error;
  const name = sdkErrorName(error);
  const message = messageOf(error);
  const cause = { cause: error };
  const unconfigured = sdkConfigurationError(error, action);
  if (unconfigured) return unconfigured;
  if (isAccessDeniedError(error)) {
    return new BackendAccessDeniedError(
      `Access denied to ${action} for ${target}: ${message}. Grant ${action} to the IAM role that runs ` +
        'torchx-serverless (and iam:PassRole on the job role for sagemaker:CreateTrainingJob)',
      cause,
    );
  }
  if (isThrottlingError(error)) {
    return new BackendError(
      `${action} for ${target} was throttled by AWS even after retries (${name || 'throttled'}): ${message}. Try again shortly`,
      true,
      cause,
    );
  }
  if (name === 'ResourceInUse') {
    return new BackendConflictError(
      `${target} already exists (${message}). Training job names are unique per account and region: ` +
        'submit again (a new dry run picks a new name) or use another base_job_name',
      cause,
    );
  }
  if (name === 'ResourceLimitExceeded') {
    return new BackendQuotaExceededError(
      `SageMaker refused ${action} for ${target} because an account quota is reached: ${message}. ` +
        'Wait for running jobs to finish, or request a higher quota in Service Quotas (service "Amazon ' +
        'SageMaker", e.g. "<instance type> for training job usage" or "Number of instances across all training jobs")',
      cause,
    );
  }
  if (name === 'ValidationException') {
    return new BackendValidationError(
      `SageMaker rejected ${action} for ${target}: ${message}`,
      [{ path: 'cfg', message: `SageMaker says: ${message}` }],
      cause,
    );
  }
  // No HTTP status means the call never got an answer (timeout, dropped connection): it may succeed later,
  // and it may even have been carried out, so it is retryable like a 5xx.
  const status = statusOf(error);
  const server = shapeOf(error).$fault === 'server' || status === undefined || status >= 500;
  return new BackendError(
    `${action} for ${target} failed${name ? ` (${name})` : ''}: ${message}`,
    server,
    cause,
  );
}
