/**
 * Error answers of the API — or of API Gateway, a proxy or something else at the endpoint — turned into a
 * {@link CliError} with a message and a hint: the API's own `{error: {code, message}}` keeps its code, its
 * message and the fields it names; a refusal of credentials says what to check; a page that is not the
 * API says the endpoint looks wrong. Whether sending the request again may help travels with the error.
 *
 * @module
 */

import { isLoopbackHostname } from '../loopback/local-token.js';
import { answerRetryable } from '../specs/errors.js';
import type { ApiErrorBody } from './api-types.js';
import { ApiError, AppNotFoundError, AuthError, type CliError, ExitCode } from './errors.js';

/** Everything {@link apiErrorFrom} needs to explain a failed answer. */
export interface FailedAnswer {
  status: number;
  contentType: string;
  bodyText: string;
  endpoint: string;
  /** Whether the request was SigV4-signed. */
  signed: boolean;
  region?: string;
  handle?: string;
  requestId?: string | undefined;
  method: string;
  path: string;
}

const HINTS: Readonly<Record<string, string>> = {
  InvalidRunConfig:
    'see the options with `txs runopts <scheduler>`; pass them as -cfg key=value,… or in .txsconfig',
  UnknownScheduler: '`txs runopts` lists the schedulers this endpoint offers',
  UnknownComponent: '`txs builtins` lists the components',
  InvalidComponentArgument: '`txs builtins <component>` shows its arguments',
  UnknownNamedResource: 'named resources look like aws_p4d.24xlarge (see the docs for the list)',
  MalformedAppHandle: 'handles look like local_cwd://torchx/echo-k3x9 or aws_batch://torchx/queue:name',
  UnknownRole: 'give a role of the app: txs describe <handle> shows them',
  UnknownReplica: 'replica indexes start at 0 and stop below the role’s numReplicas',
  IdempotencyConflict: 'that Idempotency-Key was used for a different request; use a new --idempotency-key',
  IdempotencyInProgress: 'a request with the same Idempotency-Key is still submitting; retry in a moment',
  BackendAccessDenied: 'the deployed stack lacks an AWS permission (a deployment problem): tell its operator',
  BackendNotConfigured:
    'the server needs AWS configuration for this scheduler (retrying cannot help): give it AWS_REGION and credentials and restart it; `txs run --dryrun` works without them',
  BackendError: 'AWS is throttling or failing; retry later',
  StoreUnavailable: 'the app store is unavailable; retry later',
  PayloadTooLarge: 'the request is over 1 MiB; trim the AppDef (large env or args?)',
  NotSupported: 'this scheduler does not support that; see its capabilities in `txs runopts --json`',
  HostAccessDenied:
    'this deployment does not allow that host access; ask its administrator (docs/security.md)',
  InstanceTypeNotAllowed: 'use an instance type this deployment allows, or ask its administrator',
  Forbidden: 'only deployment admins may do that (docs/security.md)',
};

/**
 * Turns an error answer of the API (or of API Gateway in front of it) into a {@link CliError}: the API's
 * `{error: {code, message}}` keeps its code and message; API Gateway's `{message}` on 401/403 becomes an
 * {@link AuthError} with a hint about credentials, region or IAM policy; 404 `UnknownApp` becomes
 * {@link AppNotFoundError}; anything else that is not the API's JSON says the endpoint looks wrong.
 *
 * @example
 * ```ts
 * apiErrorFrom({ status: 404, contentType: 'application/json', bodyText: '{"error":{"code":"UnknownApp","message":"…"}}', endpoint, signed: false, handle, method: 'GET', path });
 * ```
 */
export function apiErrorFrom(answer: FailedAnswer): CliError {
  const { status } = answer;
  const parsed = parseJson(answer.bodyText);
  const apiError = isApiErrorBody(parsed) ? parsed.error : undefined;
  const gatewayMessage =
    apiError === undefined && parsed !== null && typeof parsed === 'object'
      ? (stringField(parsed, 'message') ?? stringField(parsed, 'Message'))
      : undefined;
  const requestId = apiError?.requestId ?? answer.requestId;

  // A 403 in the API's own shape (Forbidden, HostAccessDenied, …) is a refusal by the deployment's rules,
  // not a credentials problem: it keeps its code, message and fields. The exception is the local server's
  // admission check (a `Forbidden` to an unsigned loopback request: Host or Origin not loopback).
  const localAdmission =
    status === 403 && apiError?.code === 'Forbidden' && !answer.signed && isLocalEndpoint(answer.endpoint);
  if (status === 401 || (status === 403 && apiError === undefined) || localAdmission) {
    return authError(answer, apiError?.message ?? gatewayMessage, requestId);
  }
  if (apiError === undefined) {
    if (gatewayMessage !== undefined && (status === 429 || status >= 500)) {
      return new ApiError({
        status,
        apiCode: `Http${status}`,
        message: `${answer.endpoint} answered HTTP ${status}: ${gatewayMessage}`,
        hint: status === 429 ? 'too many requests; retry in a moment' : 'the API failed; retry later',
        exitCode: ExitCode.UNAVAILABLE,
        retryable: answerRetryable(status, undefined),
        ...(requestId === undefined ? {} : { requestId }),
      });
    }
    const kind = answer.contentType.split(';')[0]?.trim() || 'no content type';
    return new ApiError({
      status,
      apiCode: `Http${status}`,
      message: `unexpected answer from ${answer.endpoint}: HTTP ${status} (${kind}) to ${answer.method} ${answer.path}`,
      hint: 'is the endpoint the torchx-serverless API? include the stage, e.g. https://abc.execute-api.us-east-1.amazonaws.com/prod',
      exitCode: ExitCode.UNAVAILABLE,
      retryable: answerRetryable(status, undefined),
      ...(requestId === undefined ? {} : { requestId }),
    });
  }
  const details = (apiError.details ?? []).filter(
    (d): d is { path: string; message: string } =>
      typeof d?.path === 'string' && typeof d?.message === 'string',
  );
  const retryable = answerRetryable(status, apiError.retryable);
  const base = {
    status,
    apiCode: apiError.code,
    details,
    retryable,
    ...(requestId === undefined ? {} : { requestId }),
  };
  if (status === 404 && apiError.code === 'UnknownApp') {
    return new AppNotFoundError({
      ...base,
      message: `unknown app ${answer.handle ?? ''}`.trim(),
      hint: '`txs list` shows your apps (apps are private to the identity that launched them)',
      exitCode: ExitCode.NOT_FOUND,
    });
  }
  if (status === 404 || status === 405) {
    return new ApiError({
      ...base,
      message: `${answer.endpoint} does not serve ${answer.method} ${answer.path}: ${apiError.message}`,
      hint: 'is the endpoint the torchx-serverless API v1? check --endpoint / TXS_ENDPOINT (include the stage)',
      exitCode: ExitCode.UNAVAILABLE,
    });
  }
  if (status === 500) {
    return new ApiError({
      ...base,
      message: `the API failed: ${apiError.message}${requestId === undefined ? '' : ` (request id ${requestId})`}`,
      hint: 'this is a bug in torchx-serverless: please report it with the request id',
      exitCode: ExitCode.UNAVAILABLE,
    });
  }
  const hint = HINTS[apiError.code];
  return new ApiError({
    ...base,
    message: apiError.message,
    ...(hint === undefined ? {} : { hint }),
    exitCode:
      status > 500 && !retryable
        ? ExitCode.CONFIG
        : status >= 500 || status === 409
          ? ExitCode.UNAVAILABLE
          : status === 403
            ? ExitCode.AUTH
            : ExitCode.USAGE,
  });
}

function isLocalEndpoint(endpoint: string): boolean {
  try {
    return isLoopbackHostname(new URL(endpoint).hostname);
  } catch {
    return false;
  }
}

function authError(
  answer: FailedAnswer,
  message: string | undefined,
  requestId: string | undefined,
): AuthError {
  const said = message === undefined ? '' : `: ${message}`;
  const region = answer.region ?? 'the configured region';
  let hint: string;
  const text = message ?? '';
  if (!answer.signed && isLocalEndpoint(answer.endpoint)) {
    hint =
      answer.status === 401
        ? 'txs reaches the local server through its own socket (~/.txs/local/<port>.sock), which only the user ' +
          'who started it can use, and never sends its token over TCP: run txs as that user'
        : 'the local server answers only to loopback names: use http://127.0.0.1:<port> or http://localhost:<port>';
  } else if (!answer.signed) {
    hint =
      'the request was not signed. Requests to *.execute-api.*.amazonaws.com are signed automatically; ' +
      'for a custom domain set TXS_SIGV4=1 (or `sigv4 = true` under [txs] in .txsconfig)';
  } else if (/missing authentication token/i.test(text)) {
    hint =
      'API Gateway also says this for a route that does not exist: check the endpoint includes the stage (…/prod)';
  } else if (/security token|UnrecognizedClient|invalid.*key id|access key/i.test(text)) {
    hint =
      'your AWS credentials are invalid or expired: refresh them (`aws sso login`, AWS_PROFILE); `aws sts get-caller-identity` shows who you are';
  } else if (/not authorized to perform|explicit deny|no identity-based policy/i.test(text)) {
    hint =
      'your IAM identity needs execute-api:Invoke on this API (arn:aws:execute-api:<region>:<account>:<api-id>/*)';
  } else if (/signature expired|request time too skewed/i.test(text)) {
    hint = 'your clock is off by more than 5 minutes: synchronise the system clock';
  } else if (/scoped to (a valid|correct) region|scope.*region/i.test(text)) {
    hint = `the request was signed for ${region}, which is not the API's region: set --region or AWS_REGION`;
  } else if (/signature.*does not match/i.test(text)) {
    hint = 'the signature was rejected: check the secret key, and that no proxy rewrites the request';
  } else {
    hint = `check your AWS credentials (\`aws sts get-caller-identity\`), the signing region (${region}), and that your IAM policy allows execute-api:Invoke on this API`;
  }
  return new AuthError({
    status: answer.status,
    apiCode: `Http${answer.status}`,
    message: `${answer.endpoint} refused the request (HTTP ${answer.status})${said}`,
    hint,
    exitCode: ExitCode.AUTH,
    ...(requestId === undefined ? {} : { requestId }),
  });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function isApiErrorBody(value: unknown): value is ApiErrorBody {
  if (value === null || typeof value !== 'object') return false;
  const error = (value as { error?: unknown }).error;
  return (
    error !== null &&
    typeof error === 'object' &&
    typeof (error as { code?: unknown }).code === 'string' &&
    typeof (error as { message?: unknown }).message === 'string'
  );
}

function stringField(value: object, key: string): string | undefined {
  const field = (value as Record<string, unknown>)[key];
  return typeof field === 'string' ? field : undefined;
}
