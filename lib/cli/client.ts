/**
 * The HTTP client of the API v1: one method per route, SigV4 signing when configured, retries for
 * transient failures (same `Idempotency-Key`, so a retried run never submits twice), and every failure
 * turned into a {@link CliError} with a message and a hint.
 *
 * @module
 */
import { parseAppHandle } from '../specs/app-handle.js';
import { backoffDelay } from '../specs/backoff.js';
import type {
  ApiErrorBody,
  AppActionResponse,
  AppCountsQuery,
  AppCountsResponse,
  AppResponse,
  ComponentsResponse,
  DryRunResponse,
  ListAppsQuery,
  ListAppsResponse,
  LogPageResponse,
  LogQuery,
  RunRequestBody,
  RunResponse,
  SchedulerInfo,
} from './api-types.js';
import {
  ApiError,
  AppNotFoundError,
  AuthError,
  type CliError,
  EndpointUnreachableError,
  ExitCode,
  UsageError,
} from './errors.js';
import { type HttpAnswer, type HttpTransport, nodeHttpTransport } from './http-transport.js';
import { findOwnSocket, type OwnSocket } from './local-socket.js';
import { isLoopbackHostname, NEW_LINK_PATH } from './local-token.js';
import type { RequestSigner } from './sigv4.js';

/** Options of {@link TxsClient}. */
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
interface RequestOptions {
  query?: Record<string, string | number | boolean | readonly string[] | undefined>;
  body?: unknown;
  headers?: Record<string, string>;
  /** The handle the request is about, for "unknown app" messages. */
  handle?: string;
  /** Aborts the request (and its retries). */
  signal?: AbortSignal;
}

/** What {@link TxsClient.waitForChange} answers. */
export interface ChangedApp {
  app: AppResponse;
  /**
   * True when the server held the request until the app changed or the wait ended (`Long-Polled: true`):
   * the caller may ask again at once. False: the server answered at once (the deployed API, or a server
   * without long polls), so the caller polls at its own pace.
   */
  longPolled: boolean;
}

/** Network error codes worth retrying: the request may not have reached the server, or its answer was lost. */
const RETRYABLE_NETWORK_CODES = new Set(['ECONNRESET', 'EPIPE', 'ETIMEDOUT']);

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
 * Client of the torchx-serverless API.
 *
 * @example
 * ```ts
 * const client = new TxsClient({ endpoint: 'http://127.0.0.1:8080' });
 * const { handle } = await client.run({ scheduler: 'local_cwd', component: 'utils.echo', args: ['--msg', 'hi'] }, 'key-1');
 * const app = await client.getApp(handle);
 * ```
 */
export class TxsClient {
  readonly endpoint: string;
  private readonly options: TxsClientOptions;
  private readonly transport: HttpTransport;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(options: TxsClientOptions) {
    this.options = options;
    this.endpoint = options.endpoint.replace(/\/+$/, '');
    this.transport = options.transport ?? nodeHttpTransport;
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  /** `GET /v1/schedulers`. */
  async schedulers(): Promise<SchedulerInfo[]> {
    return (await this.request<{ schedulers: SchedulerInfo[] }>('GET', '/v1/schedulers')).schedulers;
  }

  /** `GET /v1/components`. */
  async components(): Promise<ComponentsResponse['components']> {
    return (await this.request<ComponentsResponse>('GET', '/v1/components')).components;
  }

  /** `POST /v1/dryrun`: what would be submitted; nothing is recorded. */
  async dryrun(body: RunRequestBody): Promise<DryRunResponse> {
    return this.request<DryRunResponse>('POST', '/v1/dryrun', { body });
  }

  /** `POST /v1/apps` with an `Idempotency-Key`: retries of the same key return the same handle. */
  async run(body: RunRequestBody, idempotencyKey: string): Promise<RunResponse> {
    return this.request<RunResponse>('POST', '/v1/apps', {
      body,
      headers: { 'idempotency-key': idempotencyKey },
    });
  }

  /** `GET /v1/apps`: one page of the caller's apps, newest first. */
  async listApps(query: ListAppsQuery = {}): Promise<ListAppsResponse> {
    return this.request<ListAppsResponse>('GET', '/v1/apps', {
      query: {
        scheduler: query.scheduler,
        state: query.states,
        session: query.session,
        since: query.since,
        limit: query.limit,
        nextToken: query.nextToken,
        owner: query.owner,
      },
    });
  }

  /** `GET /v1/apps/counts`: how many of the caller's apps are in each state (a lower bound when capped). */
  async countApps(query: AppCountsQuery = {}): Promise<AppCountsResponse> {
    return this.request<AppCountsResponse>('GET', '/v1/apps/counts', {
      query: { scheduler: query.scheduler, session: query.session, since: query.since, owner: query.owner },
    });
  }

  /** `GET /v1/apps/{scheduler}/{appId}`; `refresh` asks the scheduler first. */
  async getApp(
    handle: string,
    options: { refresh?: boolean; signal?: AbortSignal } = {},
  ): Promise<AppResponse> {
    return this.request<AppResponse>('GET', appPath(handle), {
      handle,
      query: { refresh: options.refresh === true ? 'true' : undefined },
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
  }

  /**
   * `GET /v1/apps/{scheduler}/{appId}?waitFor=<revision>`: the app once its revision is no longer
   * `revision`, or after `waitSeconds` (1–20, default 20) unchanged, where the server holds requests (local
   * mode); at once elsewhere.
   */
  async waitForChange(
    handle: string,
    revision: string,
    options: { waitSeconds?: number; signal?: AbortSignal } = {},
  ): Promise<ChangedApp> {
    const { value, header } = await this.send<AppResponse>('GET', appPath(handle), {
      handle,
      query: { waitFor: revision, waitSeconds: options.waitSeconds },
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    return { app: value, longPolled: header('long-polled') === 'true' };
  }

  /** `POST /v1/apps/{scheduler}/{appId}/cancel`. */
  async cancel(handle: string): Promise<AppActionResponse> {
    return this.request<AppActionResponse>('POST', `${appPath(handle)}/cancel`, { handle });
  }

  /** `DELETE /v1/apps/{scheduler}/{appId}`. */
  async delete(handle: string): Promise<AppActionResponse> {
    return this.request<AppActionResponse>('DELETE', appPath(handle), { handle });
  }

  /** `GET /v1/apps/{scheduler}/{appId}/logs`: one page of lines. */
  async logs(handle: string, query: LogQuery = {}): Promise<LogPageResponse> {
    return this.request<LogPageResponse>('GET', `${appPath(handle)}/logs`, {
      handle,
      query: {
        role: query.role,
        replica: query.replica,
        regex: query.regex,
        since: query.since,
        until: query.until,
        streams: query.streams,
        limit: query.limit,
        nextToken: query.nextToken,
      },
    });
  }

  /**
   * The local server's `POST /ui/link`: a new one-time link to its dashboard (see `one-time-link.ts`), asked
   * only through the server's own socket (a link from a server not proven the caller's could lead anywhere).
   *
   * @throws UsageError when the endpoint's socket is not proven the caller's.
   */
  async dashboardLink(): Promise<string> {
    const own = await this.ownServer();
    if (own.path === undefined) {
      throw new UsageError(
        `cannot ask ${this.endpoint} for a dashboard link: ${own.why}`,
        'run txs ui as the user who started the local server (npm start), or open the link npm start printed',
      );
    }
    return (await this.request<{ url: string }>('POST', NEW_LINK_PATH)).url;
  }

  /**
   * Whether this client reaches a server proven to run as the caller's OS user: the local server's own socket
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

  private async request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    return (await this.send<T>(method, path, options)).value;
  }

  /** Sends a request (retrying transient failures); the answer's JSON and headers. */
  private async send<T>(
    method: string,
    path: string,
    options: RequestOptions = {},
  ): Promise<{ value: T; header: (name: string) => string | undefined }> {
    const url = this.urlOf(path, options.query);
    const body = options.body === undefined ? undefined : JSON.stringify(options.body);
    const baseHeaders: Record<string, string> = {
      accept: 'application/json',
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
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
    body: string | undefined,
    handle: string | undefined,
    signal: AbortSignal | undefined,
    socketPath: string | undefined,
  ): Promise<
    | { ok: true; value: unknown; header: (name: string) => string | undefined }
    | { ok: false; error: CliError; retryable: boolean; retryAfterMs?: number | undefined }
  > {
    let headers = baseHeaders;
    if (this.options.signer) {
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
        error: this.unreachable(error, code, socketPath),
      };
    }
    const { text, status } = response;
    if (status >= 300 && status < 400) {
      return { ok: false, retryable: false, error: this.redirected(status, response.header('location')) };
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

  /**
   * A redirect is reported, not followed: the request may carry a signature or the local token, which must
   * not go to another address; the fix is to use the address it names as the endpoint.
   */
  private redirected(status: number, location: string | undefined): EndpointUnreachableError {
    return new EndpointUnreachableError(
      this.endpoint,
      `the endpoint answered HTTP ${status}, a redirect${location === undefined ? '' : ` to ${location}`}; txs follows no redirects`,
      location === undefined
        ? 'check the endpoint URL (scheme, host and stage)'
        : 'use the address it redirects to as the endpoint (--endpoint or TXS_ENDPOINT), without the /v1/… path',
    );
  }

  private unreachable(
    error: unknown,
    code: string | undefined,
    socketPath: string | undefined,
  ): EndpointUnreachableError {
    const local = this.options.endpointSource === 'default' || this.options.endpointSource === undefined;
    const where =
      this.options.endpointSource === undefined || this.options.endpointSource === 'default'
        ? ''
        : ` (the endpoint comes from ${this.options.endpointSource})`;
    const host = new URL(this.endpoint).host;
    switch (code) {
      case 'ECONNREFUSED':
        return new EndpointUnreachableError(
          this.endpoint,
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
          this.endpoint,
          `host ${new URL(this.endpoint).hostname} not found`,
          `check the endpoint URL${where}`,
          { cause: error },
        );
      case 'ETIMEDOUT':
        return new EndpointUnreachableError(
          this.endpoint,
          `no answer within ${Math.round((this.options.timeoutMs ?? 60_000) / 1000)} s`,
          `check the network and the endpoint URL${where}; the server may be overloaded, retry later`,
          { cause: error },
        );
      default: {
        const reason = innermostMessage(error);
        const tls = code?.startsWith('CERT_') || code?.includes('TLS') || /certificate|ssl|tls/i.test(reason);
        return new EndpointUnreachableError(
          this.endpoint,
          tls ? `TLS error: ${reason}` : reason,
          tls
            ? 'check the endpoint URL uses the right scheme (http:// for the local server, https:// for API Gateway)'
            : `check the endpoint URL${where} and the network`,
          { cause: error },
        );
      }
    }
  }
}

/** The API path of the app named by `handle`. @throws UsageError for a malformed handle. */
export function appPath(handle: string): string {
  let parsed: ReturnType<typeof parseAppHandle>;
  try {
    parsed = parseAppHandle(handle);
  } catch (error) {
    throw new UsageError(
      (error as Error).message,
      'handles look like local_cwd://torchx/echo-k3x9 or aws_batch://torchx/queue:name (txs list shows yours)',
    );
  }
  return `/v1/apps/${encodeURIComponent(parsed.scheduler)}/${encodeURIComponent(parsed.appId)}`;
}

function lowerCaseKeys(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
}

/** Back-off between retries of a transient failure that named no `Retry-After`. */
const RETRY_BACKOFF = { baseMs: 500, capMs: 8_000 } as const;

function retryAfterMs(header: string | undefined): number | undefined {
  if (header === undefined) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.min(seconds, 20) * 1000;
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.min(Math.max(0, date - Date.now()), 20_000);
}

/**
 * Whether an answer may be cured by sending the request again: the API says so in `error.retryable`; an
 * answer without it (API Gateway's own throttling or timeout, a proxy, an older server) is judged by its
 * status alone.
 */
function retryableAnswer(status: number, said: unknown): boolean {
  if (typeof said === 'boolean') return said;
  return status === 429 || status === 502 || status === 503 || status === 504;
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

function credentialsError(error: unknown): AuthError {
  const reason = error instanceof Error ? error.message : String(error);
  return new AuthError({
    status: 0,
    apiCode: 'CredentialsUnavailable',
    message: `cannot sign the request: no usable AWS credentials (${reason})`,
    hint: 'configure credentials the AWS CLI way: AWS_PROFILE / --profile, `aws sso login`, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY',
    exitCode: ExitCode.AUTH,
  });
}

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
        retryable: retryableAnswer(status, undefined),
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
      retryable: retryableAnswer(status, undefined),
      ...(requestId === undefined ? {} : { requestId }),
    });
  }
  const details = (apiError.details ?? []).filter(
    (d): d is { path: string; message: string } =>
      typeof d?.path === 'string' && typeof d?.message === 'string',
  );
  const retryable = retryableAnswer(status, apiError.retryable);
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
