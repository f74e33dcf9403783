/**
 * How the CLI's requests travel: the URL and headers of each request, SigV4 signing when configured, the
 * local server's own socket when it is proven the caller's, and retries of transient failures — network
 * errors that may not have reached the server, and answers the API marks retryable — after `Retry-After`
 * or an exponential back-off. Each answer becomes JSON, or a {@link CliError} (`answer-errors.ts`,
 * `network-errors.ts`).
 *
 * @module
 */

import type { Readable } from 'node:stream';
import { findOwnSocket, type OwnSocket } from '../loopback/local-socket.js';
import { backoffDelay, sleep } from '../specs/backoff.js';
import { apiErrorFrom } from './answer-errors.js';
import { ApiError, type CliError, EndpointUnreachableError, UsageError } from './errors.js';
import { type HttpAnswer, type HttpTransport, nodeHttpTransport } from './http-transport.js';
import {
  credentialsError,
  type EndpointDescription,
  networkErrorCode,
  RETRYABLE_NETWORK_CODES,
  redirectError,
  unreachableError,
} from './network-errors.js';
import type { RequestSigner } from './sigv4.js';

/** Options of {@link TxsClient} (and of its {@link ApiTransport}). */
export interface TxsClientOptions {
  /** API base URL without a trailing slash (may include a stage path, e.g. `…/prod`). */
  endpoint: string;
  /** Where the endpoint setting came from, for hints (`default` means the local server). */
  endpointSource?: string;
  /** Signs each request (SigV4 for `execute-api`); unsigned when omitted. */
  signer?: RequestSigner;
  /** Signing region, for auth hints. */
  region?: string;
  /** Sends each request; `node:http` / `node:https` by default (see `http-transport.ts`). */
  transport?: HttpTransport;
  /** Waits between retries; `setTimeout` by default. */
  sleep?: (ms: number) => Promise<void>;
  /** Per-request timeout; 60 s by default. */
  timeoutMs?: number;
  /** Retries after the first attempt for transient failures; 3 by default. */
  maxRetries?: number;
  /** Extra headers on every request (e.g. `x-txs-user` for the local server). */
  headers?: Record<string, string>;
  userAgent?: string;
  /**
   * Finds the local server's own socket for unsigned requests (see `local-socket.ts`); default
   * {@link findOwnSocket} of the endpoint with this process's environment, home and uid. Requests go through
   * the socket when one is proven the caller's, else over TCP; no local token is sent either way.
   */
  ownSocket?: () => Promise<OwnSocket>;
}

/** Options of one request. */
export interface RequestOptions {
  query?: Record<string, string | number | boolean | readonly string[] | undefined>;
  /** Sent as JSON. */
  body?: unknown;
  /**
   * Streamed as is, as `application/octet-stream`, instead of a JSON `body` (a workspace archive to the local
   * server): opened anew for each attempt; give its length in a `content-length` header.
   */
  stream?: () => Readable;
  headers?: Record<string, string>;
  /** The handle the request is about, for "unknown app" messages. */
  handle?: string;
  /** Aborts the request (and its retries). */
  signal?: AbortSignal;
}

/**
 * Sends the requests of a {@link TxsClient}.
 *
 * @example
 * ```ts
 * const transport = new ApiTransport({ endpoint: 'http://127.0.0.1:8080' });
 * const { value } = await transport.send<{ schedulers: unknown[] }>('GET', '/v1/schedulers');
 * ```
 */
export class ApiTransport {
  readonly endpoint: string;
  private readonly options: TxsClientOptions;
  private readonly transport: HttpTransport;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(options: TxsClientOptions) {
    this.options = options;
    this.endpoint = options.endpoint.replace(/\/+$/, '');
    this.transport = options.transport ?? nodeHttpTransport;
    this.sleep = options.sleep ?? sleep;
  }

  /**
   * Whether requests reach a server proven to run as the caller's OS user: the local server's own socket
   * (its path), or why not. Only such a server may receive the caller's environment or working directory.
   */
  ownServer(): Promise<OwnSocket> {
    if (this.options.signer)
      return Promise.resolve({ why: `${this.endpoint} is a signed (deployed) endpoint` });
    return (this.options.ownSocket ?? (() => findOwnSocket(this.endpoint)))();
  }

  /** Builds the full URL of `path` with `query` (arrays become repeated parameters). */
  urlOf(path: string, query: RequestOptions['query'] = {}): URL {
    const url = new URL(`${this.endpoint}${path}`);
    for (const [key, value] of Object.entries(query)) {
      if (value === undefined) continue;
      if (Array.isArray(value)) for (const item of value) url.searchParams.append(key, String(item));
      else url.searchParams.set(key, String(value));
    }
    return url;
  }

  /** Sends a request (retrying transient failures); the answer's JSON and headers. */
  async send<T>(
    method: string,
    path: string,
    options: RequestOptions = {},
  ): Promise<{ value: T; header: (name: string) => string | undefined }> {
    const url = this.urlOf(path, options.query);
    const body = options.stream ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
    const baseHeaders: Record<string, string> = {
      accept: 'application/json',
      ...(body === undefined
        ? {}
        : { 'content-type': options.stream === undefined ? 'application/json' : 'application/octet-stream' }),
      ...lowerCaseKeys(this.options.headers ?? {}),
      ...lowerCaseKeys(options.headers ?? {}),
    };
    // The local server's own socket when proven; never a token (over TCP, `localhost` may be someone else's).
    const socketPath = (await this.ownServer()).path;
    const maxRetries = this.options.maxRetries ?? 3;
    for (let attempt = 0; ; attempt++) {
      const outcome = await this.attempt(
        method,
        url,
        baseHeaders,
        body,
        options.handle,
        options.signal,
        socketPath,
      );
      if (outcome.ok) return { value: outcome.value as T, header: outcome.header };
      if (!outcome.retryable || attempt >= maxRetries) throw outcome.error;
      await this.sleep(outcome.retryAfterMs ?? backoffDelay(attempt, RETRY_BACKOFF));
    }
  }

  private async attempt(
    method: string,
    url: URL,
    baseHeaders: Record<string, string>,
    body: string | (() => Readable) | undefined,
    handle: string | undefined,
    signal: AbortSignal | undefined,
    socketPath: string | undefined,
  ): Promise<
    | { ok: true; value: unknown; header: (name: string) => string | undefined }
    | { ok: false; error: CliError; retryable: boolean; retryAfterMs?: number | undefined }
  > {
    let headers = baseHeaders;
    if (this.options.signer) {
      if (typeof body === 'function') {
        // Streamed bodies are workspace archives, which a deployed API takes only through S3 upload URLs.
        return {
          ok: false,
          retryable: false,
          error: new UsageError(
            `${this.endpoint} is a deployed endpoint: archives go to the upload URL it answers, not to the API`,
            'upgrade txs, or run without a workspace (--workspace "")',
          ),
        };
      }
      try {
        headers = await this.options.signer.sign({
          method,
          url,
          headers: { ...baseHeaders },
          ...(body === undefined ? {} : { body }),
        });
      } catch (error) {
        return { ok: false, retryable: false, error: credentialsError(error) };
      }
    }
    if (this.options.userAgent !== undefined) headers = { ...headers, 'user-agent': this.options.userAgent };
    let response: HttpAnswer;
    try {
      response = await this.transport({
        method,
        url,
        headers,
        ...(body === undefined ? {} : { body }),
        ...(socketPath === undefined ? {} : { socketPath }),
        timeoutMs: this.options.timeoutMs ?? 60_000,
        ...(signal === undefined ? {} : { signal }),
      });
    } catch (error) {
      const code = networkErrorCode(error);
      return {
        ok: false,
        retryable: code !== undefined && RETRYABLE_NETWORK_CODES.has(code),
        error: unreachableError(this.described(), error, code, socketPath),
      };
    }
    const { text, status } = response;
    if (status >= 300 && status < 400) {
      return {
        ok: false,
        retryable: false,
        error: redirectError(this.endpoint, status, response.header('location')),
      };
    }
    if (status >= 200 && status < 300) {
      if (text === '') return { ok: true, value: {}, header: (name: string) => response.header(name) };
      try {
        return { ok: true, value: JSON.parse(text), header: (name: string) => response.header(name) };
      } catch {
        return {
          ok: false,
          retryable: false,
          error: new EndpointUnreachableError(
            this.endpoint,
            `the answer to ${method} ${url.pathname} is not JSON (HTTP ${status})`,
            'is the endpoint the torchx-serverless API? (include the stage, e.g. https://…/prod)',
          ),
        };
      }
    }
    const error = apiErrorFrom({
      status,
      contentType: response.header('content-type') ?? '',
      bodyText: text,
      requestId: response.header('x-amzn-requestid'),
      endpoint: this.endpoint,
      signed: this.options.signer !== undefined,
      ...(this.options.region === undefined ? {} : { region: this.options.region }),
      ...(handle === undefined ? {} : { handle }),
      method,
      path: url.pathname,
    });
    return {
      ok: false,
      error,
      retryable: error instanceof ApiError && error.retryable,
      retryAfterMs: retryAfterMs(response.header('retry-after')),
    };
  }

  private described(): EndpointDescription {
    return {
      endpoint: this.endpoint,
      endpointSource: this.options.endpointSource,
      timeoutMs: this.options.timeoutMs ?? 60_000,
    };
  }
}

function lowerCaseKeys(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
}

/** Back-off between retries of a transient failure that named no `Retry-After` (API calls and uploads). */
export const RETRY_BACKOFF = { baseMs: 500, capMs: 8_000 } as const;

function retryAfterMs(header: string | undefined): number | undefined {
  if (header === undefined) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.min(seconds, 20) * 1000;
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.min(Math.max(0, date - Date.now()), 20_000);
}
