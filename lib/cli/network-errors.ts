/**
 * Requests that got no answer from the API, explained: network failures (which of them a retry may cure),
 * redirects (reported, never followed), and credentials that could not sign the request.
 *
 * @module
 */
import { AuthError, EndpointUnreachableError, ExitCode } from './errors.js';

/** The endpoint a failed request was for, as the messages describe it. */
export interface EndpointDescription {
  /** API base URL. */
  endpoint: string;
  /** Where the endpoint setting came from (`default` or undefined: the local server). */
  endpointSource?: string | undefined;
  /** The per-request timeout (ms). */
  timeoutMs: number;
}

/** Network error codes worth retrying: the request may not have reached the server, or its answer was lost. */
export const RETRYABLE_NETWORK_CODES = new Set(['ECONNRESET', 'EPIPE', 'ETIMEDOUT']);

/** Why a network request failed: the first `code` along the error's cause chain (`ECONNREFUSED`, …). */
export function networkErrorCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 6 && current !== null && typeof current === 'object'; depth++) {
    const candidate = current as { code?: unknown; cause?: unknown; errors?: unknown; name?: unknown };
    if (candidate.name === 'TimeoutError') return 'ETIMEDOUT';
    if (typeof candidate.code === 'string') return candidate.code;
    current =
      candidate.cause ?? (Array.isArray(candidate.errors) ? (candidate.errors as unknown[])[0] : undefined);
  }
  return undefined;
}

/**
 * Why a request got no answer, for the user: connection refused (at the own socket, or: is the server
 * running?), host not found, no answer in time, TLS, or the innermost message of anything else.
 *
 * @param code the error's {@link networkErrorCode}.
 * @param socketPath the local server's own socket, when the request went through it.
 */
export function unreachableError(
  target: EndpointDescription,
  error: unknown,
  code: string | undefined,
  socketPath: string | undefined,
): EndpointUnreachableError {
  const local = target.endpointSource === 'default' || target.endpointSource === undefined;
  const where = local ? '' : ` (the endpoint comes from ${target.endpointSource})`;
  const host = new URL(target.endpoint).host;
  switch (code) {
    case 'ECONNREFUSED':
      return new EndpointUnreachableError(
        target.endpoint,
        socketPath === undefined
          ? 'connection refused'
          : `connection refused at ${socketPath} (a socket left by a local server that was killed?)`,
        local
          ? 'is the local server running? start it with `npm start` (or set --endpoint / TXS_ENDPOINT)'
          : `is the server running at ${host}?${where}`,
        { cause: error },
      );
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new EndpointUnreachableError(
        target.endpoint,
        `host ${new URL(target.endpoint).hostname} not found`,
        `check the endpoint URL${where}`,
        { cause: error },
      );
    case 'ETIMEDOUT':
      return new EndpointUnreachableError(
        target.endpoint,
        `no answer within ${Math.round(target.timeoutMs / 1000)} s`,
        `check the network and the endpoint URL${where}; the server may be overloaded, retry later`,
        { cause: error },
      );
    default: {
      const reason = innermostMessage(error);
      const tls = code?.startsWith('CERT_') || code?.includes('TLS') || /certificate|ssl|tls/i.test(reason);
      return new EndpointUnreachableError(
        target.endpoint,
        tls ? `TLS error: ${reason}` : reason,
        tls
          ? 'check the endpoint URL uses the right scheme (http:// for the local server, https:// for API Gateway)'
          : `check the endpoint URL${where} and the network`,
        { cause: error },
      );
    }
  }
}

/**
 * A redirect is reported, not followed: the request may carry a signature or the local token, which must
 * not go to another address; the fix is to use the address it names as the endpoint.
 */
export function redirectError(
  endpoint: string,
  status: number,
  location: string | undefined,
): EndpointUnreachableError {
  return new EndpointUnreachableError(
    endpoint,
    `the endpoint answered HTTP ${status}, a redirect${location === undefined ? '' : ` to ${location}`}; txs follows no redirects`,
    location === undefined
      ? 'check the endpoint URL (scheme, host and stage)'
      : 'use the address it redirects to as the endpoint (--endpoint or TXS_ENDPOINT), without the /v1/… path',
  );
}

function innermostMessage(error: unknown): string {
  let current: unknown = error;
  let message = error instanceof Error ? error.message : String(error);
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    if (current.message) message = current.message;
    current = current.cause;
  }
  return message;
}

/** The request could not be signed: no usable AWS credentials. */
export function credentialsError(error: unknown): AuthError {
  const reason = error instanceof Error ? error.message : String(error);
  return new AuthError({
    status: 0,
    apiCode: 'CredentialsUnavailable',
    message: `cannot sign the request: no usable AWS credentials (${reason})`,
    hint: 'configure credentials the AWS CLI way: AWS_PROFILE / --profile, `aws sso login`, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY',
    exitCode: ExitCode.AUTH,
  });
}
