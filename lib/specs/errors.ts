/**
 * Errors of the specs layer. Every error this project raises on purpose extends {@link TxsError}:
 * it carries a stable `code` (the HTTP layer maps codes to status codes in one place) and a message
 * that tells the caller what to fix.
 *
 * @module
 */

/**
 * Whether an error answer may be cured by sending the request again: the API says so in `error.retryable`
 * (`said`); an answer without it (API Gateway's own throttling or timeout, a proxy, an older server) is judged
 * by its status alone. What `txs` and the dashboard both obey.
 */
export function answerRetryable(status: number, said: unknown): boolean {
  if (typeof said === 'boolean') return said;
  return status === 429 || status === 502 || status === 503 || status === 504;
}

/** One problem with one field of a request, with the dotted path of the field. */
export interface FieldIssue {
  /** Dotted path of the offending field, e.g. `app.roles.0.numReplicas` or `cfg.queue`. */
  readonly path: string;
  /** What is wrong and how to fix it. */
  readonly message: string;
}

/**
 * Every code an error of the API can carry. Each one maps to an HTTP status in exactly one place
 * (`functions/shared/http-errors.ts`, a `Record<ApiErrorCode, number>`): a code missing there, or an error
 * class with a code missing here, is a type error.
 */
export type ApiErrorCode =
  // the request (400 unless mapped otherwise)
  | 'ValidationFailed'
  | 'InvalidJson'
  | 'InvalidRunConfig'
  | 'MalformedAppHandle'
  | 'UnknownScheduler'
  | 'UnknownNamedResource'
  | 'UnknownComponent'
  | 'InvalidComponentArgument'
  | 'AppNotSupported'
  | 'UnknownRole'
  | 'UnknownReplica'
  | 'InvalidLogToken'
  | 'BackendValidation'
  | 'NotSupported'
  // HTTP
  | 'Unauthenticated'
  | 'Unauthorized'
  | 'Forbidden'
  | 'HostAccessDenied'
  | 'InstanceTypeNotAllowed'
  | 'RouteNotFound'
  | 'MethodNotAllowed'
  | 'PayloadTooLarge'
  | 'UnsupportedMediaType'
  | 'LengthRequired'
  | 'ChecksumMismatch'
  // apps and idempotency
  | 'UnknownApp'
  | 'AppStatus'
  | 'IdempotencyConflict'
  | 'IdempotencyInProgress'
  | 'WaitTimeout'
  | 'SubmissionOutcomeUnknown'
  // schedulers (the backends)
  | 'SchedulerError'
  | 'BackendError'
  | 'BackendAccessDenied'
  | 'BackendConflict'
  | 'BackendQuotaExceeded'
  | 'BackendNotConfigured'
  // the store
  | 'StoreError'
  | 'StoreUnavailable'
  | 'StoreConflict'
  | 'StoreTableNotFound'
  | 'RecordTooLarge'
  | 'IdempotencyReservation'
  // the machine (local mode)
  | 'DiskFull'
  // anything not raised on purpose (the message carries only the request id)
  | 'InternalError';

/** Codes of the `txs` CLI's own errors (raised on the caller's machine, never sent by the API). */
export type CliErrorCode =
  | 'CliError'
  | 'UsageError'
  | 'ConfigFileError'
  | 'EndpointUnreachable'
  | 'ApiError'
  | 'AuthError'
  | 'AppNotFound'
  | 'Interrupted';

/** The code of any {@link TxsError}. */
export type ErrorCode = ApiErrorCode | CliErrorCode;

/**
 * Base class of every deliberate error in torchx-serverless.
 *
 * @example
 * ```ts
 * try { parseAppHandle('nope'); } catch (e) { if (e instanceof TxsError) console.log(e.code); }
 * ```
 */
export abstract class TxsError extends Error {
  /** Stable machine-readable code, e.g. `InvalidRunConfig`. */
  abstract readonly code: ErrorCode;
  /** Field-level issues when the error is about a request's content. */
  readonly issues: readonly FieldIssue[];

  constructor(message: string, options?: { cause?: unknown; issues?: readonly FieldIssue[] }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.issues = options?.issues ?? [];
  }
}

/**
 * Codes of errors whose messages carry a backend's own text (DynamoDB's or AWS's wording, table names, ARNs,
 * account ids). Such a message is for the service's log only: the HTTP layer answers with its own words and
 * the runner records only the code. The errors themselves are defined in the store and schedulers layers.
 */
export const BACKEND_TEXT_CODES: ReadonlySet<string> = new Set([
  'StoreError',
  'StoreUnavailable',
  'StoreTableNotFound',
  'BackendError',
  'BackendAccessDenied',
  'BackendQuotaExceeded',
  'BackendConflict',
  'BackendValidation',
]);

/** Renders a cfg the way TorchX's messages do (`<EMPTY>` when nothing was given). */
/**
 * Run options whose values may be secrets (a caller's environment): messages show their names, never their
 * values.
 */
export const SECRET_CFG_KEYS: ReadonlySet<string> = new Set(['env']);

function renderCfg(cfg: Readonly<Record<string, unknown>> | undefined): string {
  if (!cfg || Object.keys(cfg).length === 0) return '<EMPTY>';
  return JSON.stringify(cfg, (key, value: unknown) => {
    if (!SECRET_CFG_KEYS.has(key) || value === null || typeof value !== 'object') return value;
    return Array.isArray(value)
      ? '<hidden>'
      : Object.fromEntries(Object.keys(value).map((k) => [k, '<hidden>']));
  });
}

/**
 * Thrown when run options (`cfg`) do not satisfy a scheduler's declared options: a required option is
 * missing or a value has the wrong type.
 */
export class InvalidRunConfigError extends TxsError {
  readonly code = 'InvalidRunConfig';
  /** The offending option's snake_case name. */
  readonly cfgKey: string;

  constructor(reason: string, cfgKey: string, cfg?: Readonly<Record<string, unknown>>) {
    super(`${reason}. Given: ${renderCfg(cfg)}`, { issues: [{ path: `cfg.${cfgKey}`, message: reason }] });
    this.cfgKey = cfgKey;
  }
}

/** Thrown when an app handle is not of the form `{scheduler}://{session}/{appId}`. */
export class MalformedAppHandleError extends TxsError {
  readonly code = 'MalformedAppHandle';
  constructor(
    readonly handle: string,
    reason?: string,
  ) {
    const shown = JSON.stringify(handle.length > 300 ? `${handle.slice(0, 300)}…` : handle).slice(1, -1);
    super(
      `${shown} is not of the form: <scheduler_backend>://<session_name>/<app_id>${reason ? ` (${reason})` : ''}`,
    );
  }
}

/** Thrown when a scheduler name is not registered. The message lists the known names. */
export class UnknownSchedulerError extends TxsError {
  readonly code = 'UnknownScheduler';
  constructor(
    readonly scheduler: string,
    readonly known: readonly string[],
  ) {
    // The issue repeats the message, so a client printing both shows the list once.
    const message = `Scheduler backend: ${scheduler} does not exist. Use one of: ${known.join(', ') || '<none>'}`;
    super(message, { issues: [{ path: 'scheduler', message }] });
  }
}

/** Thrown when an app does not exist (or is not visible to the caller). */
export class UnknownAppError extends TxsError {
  readonly code = 'UnknownApp';
  constructor(readonly handle: string) {
    super(
      `Unknown app = ${handle}. Check the handle (txs list shows your apps); ` +
        'the app may also have finished and been purged by the scheduler',
    );
  }
}

/** Thrown by `AppStatus.raiseForStatus()` when the app did not succeed. */
export class AppStatusError extends TxsError {
  readonly code = 'AppStatus';
  constructor(
    readonly status: { readonly state: string },
    message: string,
  ) {
    super(message);
  }
}

/**
 * Thrown when a request's content is invalid: an AppDef that does not parse, a role without an entrypoint,
 * a resource that cannot be scheduled, an option value a scheduler cannot accept. `issues` names each field.
 */
export class ValidationError extends TxsError {
  readonly code: ApiErrorCode = 'ValidationFailed';
  constructor(message: string, issues: readonly FieldIssue[] = [], options?: { cause?: unknown }) {
    super(message, { issues, cause: options?.cause });
  }

  /** Builds a ValidationError about exactly one field. */
  static forField(path: string, message: string): ValidationError {
    return new ValidationError(`${path}: ${message}`, [{ path, message }]);
  }
}

/** Thrown when a named resource (e.g. `aws_p4d.24xlarge`) does not exist. The message suggests close names. */
export class UnknownNamedResourceError extends ValidationError {
  override readonly code = 'UnknownNamedResource';
  constructor(
    readonly resourceName: string,
    suggestions: readonly string[],
    path = 'resource',
  ) {
    const hint = suggestions.length > 0 ? ` Did you mean: ${suggestions.join(', ')}?` : '';
    const message = `No named resource found for \`${resourceName}\`.${hint}`;
    super(message, [{ path, message }]);
  }
}

/** Node.js and LevelDB wordings of a write refused for want of space (ENOSPC, EDQUOT). */
const NO_SPACE = /\b(ENOSPC|EDQUOT)\b|No space left on device|Disk quota exceeded/;

/** True when `error` (or its cause) is a write refused because the disk (or the user's quota) is full. */
export function isDiskFull(error: unknown): boolean {
  for (let e = error, depth = 0; e !== undefined && e !== null && depth < 5; depth++) {
    const { code, message, cause } = e as { code?: unknown; message?: unknown; cause?: unknown };
    if (code === 'ENOSPC' || code === 'EDQUOT' || code === 'DiskFull') return true;
    if (typeof message === 'string' && NO_SPACE.test(message)) return true;
    e = cause;
  }
  return false;
}

/**
 * The local server's disk is full (HTTP 503): a record or a job's files could not be written. Nothing is
 * lost that was written before; the server keeps running and the request can be retried once space is freed.
 */
export class DiskFullError extends TxsError {
  readonly code = 'DiskFull';
  constructor(
    readonly path: string,
    options?: { cause?: unknown },
  ) {
    super(
      `disk full at ${path}: the write was refused (no space left); free space there (a job's own logs under ` +
        'the data directory are the usual cause), then retry',
      options,
    );
  }
}
