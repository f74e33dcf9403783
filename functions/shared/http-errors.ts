/**
 * The one place where errors become HTTP responses: our errors map to a status by `code`; middy's own
 * HTTP errors (body parsing) map to our codes; anything else is a 500 that carries only the request id.
 */
import { type ApiErrorCode, BACKEND_TEXT_CODES, type ErrorCode, TxsError } from '../../lib/specs/index.js';

/** How the API answers one error code. */
export interface HttpErrorFact {
  /** The HTTP status. */
  status: number;
  /**
   * Whether the same request, sent again unchanged, may succeed (throttling, a busy store, a submission in
   * flight). The answer says so in `error.retryable` and, when true, a `Retry-After` header; the clients
   * (`txs`, the TorchX plugin, the dashboard) retry only then. A wrong request or a server that must first
   * be configured (`BackendNotConfigured`, `BackendAccessDenied`) is not retryable: each retried submission
   * would only leave one more FAILED record.
   */
  retryable: boolean;
}

/**
 * The HTTP status and retryability of every API error code: the one mapping. `Record<ApiErrorCode, …>` makes
 * it exhaustive (a new code without a status, or a status for an unknown code, does not compile).
 */
export const HTTP_ERRORS: Readonly<Record<ApiErrorCode, HttpErrorFact>> = {
  ValidationFailed: { status: 400, retryable: false },
  InvalidJson: { status: 400, retryable: false },
  InvalidRunConfig: { status: 400, retryable: false },
  MalformedAppHandle: { status: 400, retryable: false },
  UnknownScheduler: { status: 400, retryable: false },
  UnknownNamedResource: { status: 400, retryable: false },
  UnknownComponent: { status: 400, retryable: false },
  InvalidComponentArgument: { status: 400, retryable: false },
  AppNotSupported: { status: 400, retryable: false },
  UnknownRole: { status: 400, retryable: false },
  UnknownReplica: { status: 400, retryable: false },
  InvalidLogToken: { status: 400, retryable: false },
  BackendValidation: { status: 400, retryable: false },
  NotSupported: { status: 400, retryable: false },
  Unauthenticated: { status: 401, retryable: false },
  Unauthorized: { status: 401, retryable: false },
  Forbidden: { status: 403, retryable: false },
  HostAccessDenied: { status: 403, retryable: false },
  InstanceTypeNotAllowed: { status: 403, retryable: false },
  UnknownApp: { status: 404, retryable: false },
  RouteNotFound: { status: 404, retryable: false },
  MethodNotAllowed: { status: 405, retryable: false },
  PayloadTooLarge: { status: 413, retryable: false },
  UnsupportedMediaType: { status: 415, retryable: false },
  LengthRequired: { status: 411, retryable: false },
  ChecksumMismatch: { status: 400, retryable: false },
  AppStatus: { status: 409, retryable: false },
  IdempotencyConflict: { status: 422, retryable: false },
  IdempotencyInProgress: { status: 409, retryable: true },
  WaitTimeout: { status: 504, retryable: true },
  SubmissionOutcomeUnknown: { status: 503, retryable: true },
  SchedulerError: { status: 500, retryable: false },
  BackendError: { status: 503, retryable: true },
  BackendAccessDenied: { status: 502, retryable: false },
  BackendConflict: { status: 409, retryable: false },
  BackendQuotaExceeded: { status: 503, retryable: false },
  BackendNotConfigured: { status: 503, retryable: false },
  StoreError: { status: 500, retryable: false },
  StoreUnavailable: { status: 503, retryable: true },
  StoreConflict: { status: 503, retryable: true },
  StoreTableNotFound: { status: 500, retryable: false },
  RecordTooLarge: { status: 500, retryable: false },
  IdempotencyReservation: { status: 500, retryable: false },
  DiskFull: { status: 503, retryable: true },
  InternalError: { status: 500, retryable: false },
};

/** The HTTP status of every API error code (from {@link HTTP_ERRORS}). */
export const STATUS_BY_CODE = Object.fromEntries(
  Object.entries(HTTP_ERRORS).map(([code, fact]) => [code, fact.status]),
) as Readonly<Record<ApiErrorCode, number>>;

/**
 * Our own words for the errors of `BACKEND_TEXT_CODES` (lib/specs), whose messages carry DynamoDB's or AWS's
 * text (table names, ARNs, account ids, the service's wording). The client gets these instead, with the request id; the original message is in
 * the function's log under that id (the middleware logs every error it maps).
 */
const PUBLIC_MESSAGES: Readonly<Record<string, string>> = {
  StoreError: 'The app record store failed this request',
  StoreUnavailable: 'The app record store is busy or unreachable; try again shortly',
  StoreTableNotFound: 'The app record table is missing: the deployment is incomplete; tell its operator',
  BackendError:
    'The scheduler backend (AWS) failed the call; try again later, and tell the operator if it persists',
  BackendAccessDenied:
    "AWS denied a call this service needs: the deployment's IAM permissions are incomplete; tell its operator",
  BackendQuotaExceeded:
    'An account quota of the scheduler backend is reached: wait for running jobs to finish, or ask the ' +
    'operator to raise the quota in Service Quotas',
  BackendConflict:
    'The backend already has a job with this name: submit again (a new dry run picks a new name)',
  BackendValidation:
    "AWS rejected the request's content after this service's checks passed: check the run options (cfg) " +
    'and the app against docs/schedulers.md',
};

/** A JSON error response. */
export interface ErrorResponse {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

/** An error raised by the HTTP layer itself (bad JSON, wrong media type, unknown route). */
export class HttpRequestError extends TxsError {
  constructor(
    readonly code: ApiErrorCode,
    message: string,
    issues: { path: string; message: string }[] = [],
  ) {
    super(message, { issues });
  }
}

interface MiddyHttpError {
  statusCode: number;
  message: string;
  cause?: { package?: string; message?: string };
}

function isMiddyHttpError(error: unknown): error is MiddyHttpError {
  return (
    error instanceof Error &&
    typeof (error as Partial<MiddyHttpError>).statusCode === 'number' &&
    (error as Partial<MiddyHttpError>).statusCode !== undefined
  );
}

/** HTTP status of an error code; the CLI's own codes never reach the API, and would be a 500. */
export function statusForCode(code: ErrorCode): number {
  return Object.hasOwn(STATUS_BY_CODE, code) ? STATUS_BY_CODE[code as ApiErrorCode] : 500;
}

/** Seconds a retryable answer asks the client to wait (`Retry-After`). */
const RETRY_AFTER_SECONDS = 5;

/**
 * Whether retrying the request unchanged may cure `error`: its code's fact in {@link HTTP_ERRORS}, narrowed by
 * an error that knows better about itself (a `BackendError` whose `retryable` is false: AWS rejected the
 * content). An error outside the map (the CLI's own codes) is not retryable.
 */
export function isRetryable(error: TxsError): boolean {
  if (!Object.hasOwn(HTTP_ERRORS, error.code)) return false;
  const own = (error as { retryable?: unknown }).retryable;
  return HTTP_ERRORS[error.code as ApiErrorCode].retryable && own !== false;
}

/** Normalizes any thrown value into our error vocabulary. */
export function toTxsError(error: unknown): TxsError | undefined {
  if (error instanceof TxsError) return error;
  if (isMiddyHttpError(error) && error.cause?.package === '@middy/http-json-body-parser') {
    const detail = error.cause.message ? `: ${error.cause.message}` : ': the request body is missing';
    return new HttpRequestError('InvalidJson', `The request body is not valid JSON${detail}`, [
      { path: 'body', message: `not valid JSON${detail}` },
    ]);
  }
  return undefined;
}

/**
 * Builds the JSON error response for `error`.
 *
 * @param requestId included so users can quote it; a 500's message is only this.
 */
export function errorResponse(error: unknown, requestId: string): ErrorResponse {
  const known = toTxsError(error);
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (!known) {
    return {
      statusCode: 500,
      headers,
      body: JSON.stringify({
        error: {
          code: 'InternalError',
          message: `Internal error (request id ${requestId})`,
          requestId,
          retryable: false,
        },
      }),
    };
  }
  const statusCode = statusForCode(known.code);
  const retryable = isRetryable(known);
  if (retryable) headers['retry-after'] = String(RETRY_AFTER_SECONDS);
  // The stored answer of an earlier request with the same Idempotency-Key (as on a replayed 201).
  if ((known as { replayed?: unknown }).replayed === true) headers['idempotent-replayed'] = 'true';
  const publicMessage = BACKEND_TEXT_CODES.has(known.code)
    ? (PUBLIC_MESSAGES[known.code] ?? 'A backend of this service failed the request')
    : undefined;
  const payload: Record<string, unknown> = {
    code: known.code,
    message: publicMessage === undefined ? known.message : `${publicMessage} (request id ${requestId})`,
    requestId,
    retryable,
  };
  if (known.issues.length > 0 && publicMessage === undefined) payload.details = known.issues;
  // SubmissionOutcomeUnknown: the app's handle, to check its status or retry with the same Idempotency-Key.
  const handle = (known as { handle?: unknown }).handle;
  if (known.code === 'SubmissionOutcomeUnknown' && typeof handle === 'string') payload.handle = handle;
  return { statusCode, headers, body: JSON.stringify({ error: payload }) };
}
