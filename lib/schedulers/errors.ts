/**
 * Errors of the schedulers layer. Each extends the project-wide `TxsError`, so the HTTP layer maps them by
 * `code`; AWS SDK errors ride in `cause`.
 *
 * @module
 */
import { type ApiErrorCode, TxsError, ValidationError } from '../specs/index.js';

/** Base class for scheduler failures. */
export class SchedulerError extends TxsError {
  readonly code: ApiErrorCode = 'SchedulerError';
}

/** The scheduler does not support the operation (e.g. logs on a backend without log access). */
export class NotSupportedError extends SchedulerError {
  override readonly code = 'NotSupported';
}

/** The app is not compatible with the scheduler (too many roles, an unsupported mount, …). */
export class AppNotSupportedError extends ValidationError {
  override readonly code = 'AppNotSupported';
}

/**
 * The run asks for an instance type the deployment does not allow (HTTP 403). `issues` names the field the
 * instance type came from (`cfg.instance_type` or the role's resource).
 */
export class InstanceTypeNotAllowedError extends TxsError {
  readonly code = 'InstanceTypeNotAllowed';
  constructor(path: string, instanceType: string, allowed: readonly string[], setting: string) {
    const message = `instance type ${instanceType} is not allowed by this deployment (allowed: ${allowed.join(', ')}; an administrator allows more with ${setting})`;
    super(`${path}: ${message}`, { issues: [{ path, message }] });
  }
}

/** A role name given for logs does not exist in the app. */
export class UnknownRoleError extends ValidationError {
  override readonly code = 'UnknownRole';
  constructor(
    readonly role: string,
    readonly known: readonly string[],
  ) {
    super(`Unknown role '${role}'. The app has: ${known.join(', ') || '<no roles>'}`, [
      { path: 'role', message: `unknown role '${role}'; use one of: ${known.join(', ')}` },
    ]);
  }
}

/** A replica index is out of range for a role. */
export class UnknownReplicaError extends ValidationError {
  override readonly code = 'UnknownReplica';
  constructor(role: string, replica: number, numReplicas: number) {
    const message = `role '${role}' has ${numReplicas} replica(s) (0..${numReplicas - 1}); replica ${replica} does not exist`;
    super(message, [{ path: 'replica', message }]);
  }
}

/**
 * The backend refused or failed a call: access denied, throttled past the SDK's retries, a service error.
 * `retryable` says whether trying again later may help.
 */
export class BackendError extends SchedulerError {
  override readonly code = 'BackendError';
  constructor(
    message: string,
    readonly retryable: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The backend denied access (IAM). The message names the action that was denied. */
export class BackendAccessDeniedError extends SchedulerError {
  override readonly code = 'BackendAccessDenied';
}

/** A log page token that this scheduler did not issue, or that has expired. */
export class InvalidLogTokenError extends ValidationError {
  override readonly code = 'InvalidLogToken';
  constructor() {
    super('nextToken is not valid for this log query; start again without it', [
      {
        path: 'nextToken',
        message: 'not a token issued for this query; omit it to start from the beginning',
      },
    ]);
  }
}

/**
 * The backend already holds a resource with the name the request uses (e.g. a SageMaker training job name
 * that is taken). Submitting again with a new name (a new dry run) fixes it.
 */
export class BackendConflictError extends SchedulerError {
  override readonly code = 'BackendConflict';
}

/**
 * An account quota or limit of the backend was reached (e.g. SageMaker `ResourceLimitExceeded`). The
 * message names the quota to raise in Service Quotas, or to wait for running jobs to finish.
 */
export class BackendQuotaExceededError extends SchedulerError {
  override readonly code = 'BackendQuotaExceeded';
}

/**
 * The backend rejected the request's content (e.g. a SageMaker `ValidationException` on submit) after the
 * scheduler's own checks passed. The message carries the backend's explanation.
 */
export class BackendValidationError extends ValidationError {
  override readonly code = 'BackendValidation';
}

/**
 * The AWS SDK could not even send a request: no region or no credentials on the machine running the
 * service (typically local mode without AWS configuration). Retrying does not help; configuring does.
 */
export class BackendNotConfiguredError extends SchedulerError {
  override readonly code = 'BackendNotConfigured';
}

/**
 * Recognises the SDK's own configuration failures (missing region, no credentials) and explains how to fix
 * them; undefined for any other error.
 *
 * @param action e.g. `batch:SubmitJob`
 */
export function sdkConfigurationError(error: unknown, action: string): BackendNotConfiguredError | undefined {
  if (error === null || typeof error !== 'object') return undefined;
  const { name = '', message = '' } = error as { name?: string; message?: string };
  const noRegion = /region is missing/i.test(message);
  const noCredentials = name === 'CredentialsProviderError' || /could not load credentials/i.test(message);
  if (!noRegion && !noCredentials) return undefined;
  const missing = noRegion ? 'an AWS region' : 'AWS credentials';
  return new BackendNotConfiguredError(
    `${action} needs ${missing} on the machine running torchx-serverless: set AWS_REGION and credentials ` +
      '(AWS_PROFILE, `aws sso login` or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY), then restart it. ' +
      'Dry runs work without them.',
    { cause: error },
  );
}
