/**
 * The one place where errors become HTTP responses: our errors map to a status by `code`; middy's own
 * HTTP errors (body parsing) map to our codes; anything else is a 500 that carries only the request id.
 */
import { type ApiErrorCode, BACKEND_TEXT_CODES, type ErrorCode, TxsError } from '../../lib/specs/index.js';

/**
 * The HTTP status of every API error code: the one mapping. `Record<ApiErrorCode, number>` makes it exhaustive
 * (a new code without a status, or a status for an unknown code, does not compile).
 */
export const STATUS_BY_CODE: Readonly<Record<ApiErrorCode, number>> = {
  ValidationFailed: 400,
  InvalidJson: 400,
  InvalidRunConfig: 400,
  MalformedAppHandle: 400,
  UnknownScheduler: 400,
  UnknownNamedResource: 400,
  UnknownComponent: 400,
  InvalidComponentArgument: 400,
  AppNotSupported: 400,
  UnknownRole: 400,
  UnknownReplica: 400,
  InvalidLogToken: 400,
  BackendValidation: 400,
  NotSupported: 400,
  Unauthenticated: 401,
  Unauthorized: 401,
  Forbidden: 403,
  HostAccessDenied: 403,
  InstanceTypeNotAllowed: 403,
  UnknownApp: 404,
  RouteNotFound: 404,
  MethodNotAllowed: 405,
  PayloadTooLarge: 413,
  UnsupportedMediaType: 415,
  AppStatus: 409,
  IdempotencyConflict: 422,
  IdempotencyInProgress: 409,
  WaitTimeout: 504,
  SubmissionOutcomeUnknown: 503,
  SchedulerError: 500,
  BackendError: 503,
  BackendAccessDenied: 502,
  BackendConflict: 409,
  BackendQuotaExceeded: 503,
  BackendNotConfigured: 503,
  StoreError: 500,
  StoreUnavailable: 503,
  StoreConflict: 503,
  StoreTableNotFound: 500,
  RecordTooLarge: 500,
  IdempotencyReservation: 500,
  DiskFull: 503,
  InternalError: 500,
};

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

/** Normalizes any thrown value into our error vocabulary. */
export function toTxsError(error: unknown): TxsError | undefined {
  if (error instanceof TxsError) return error;
  if (isMiddyHttpError(error) && error.cause?.package === '@middy/http-json-body-parser') {
    if (error.message === 'Unsupported Media Type') {
      return new HttpRequestError(
        'UnsupportedMediaType',
        'Send the body as JSON with Content-Type: application/json',
      );
    }
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
        error: { code: 'InternalError', message: `Internal error (request id ${requestId})`, requestId },
      }),
    };
  }
  const statusCode = statusForCode(known.code);
  if (statusCode === 503 && known.code !== 'BackendNotConfigured') headers['retry-after'] = '5';
  const publicMessage = BACKEND_TEXT_CODES.has(known.code)
    ? (PUBLIC_MESSAGES[known.code] ?? 'A backend of this service failed the request')
    : undefined;
  const payload: Record<string, unknown> = {
    code: known.code,
    message: publicMessage === undefined ? known.message : `${publicMessage} (request id ${requestId})`,
    requestId,
  };
  if (known.issues.length > 0 && publicMessage === undefined) payload.details = known.issues;
  // SubmissionOutcomeUnknown: the app's handle, to check its status or retry with the same Idempotency-Key.
  const handle = (known as { handle?: unknown }).handle;
  if (known.code === 'SubmissionOutcomeUnknown' && typeof handle === 'string') payload.handle = handle;
  return { statusCode, headers, body: JSON.stringify({ error: payload }) };
}
