/**
 * The typed client of the API v1: one method per route, each with its request and answer types. Requests
 * travel through an {@link ApiTransport} (signing, the own socket, retries with the same `Idempotency-Key`,
 * so a retried run never submits twice); every failure arrives as a {@link CliError} with a message and a
 * hint.
 *
 * @module
 */

import type { Readable } from 'node:stream';
import type { OwnSocket } from '../loopback/local-socket.js';
import { NEW_LINK_PATH } from '../loopback/local-token.js';
import type { WorkspaceOfferResponse, WorkspaceUpload } from '../specs/api.js';
import { parseAppHandle } from '../specs/app-handle.js';
import { ApiTransport, type RequestOptions, type TxsClientOptions } from './api-transport.js';
import type {
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
import { UsageError } from './errors.js';
import type { HttpTransport } from './http-transport.js';

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
  private readonly transport: ApiTransport;

  /** The transport of the options (tests), else undefined: the default. */
  private readonly http: HttpTransport | undefined;

  constructor(options: TxsClientOptions) {
    this.http = options.transport;
    this.transport = new ApiTransport(options);
    this.endpoint = this.transport.endpoint;
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

  /**
   * `POST /v1/workspaces`: whether the server holds the archive for the caller (`stored`), else where to
   * upload it (`upload`). With the `scheduler` of the run it is for, the server refuses an archive that run
   * could not use before anything is uploaded.
   */
  async offerWorkspace(offer: {
    sha256: string;
    size: number;
    fileCount: number;
    scheduler?: string;
  }): Promise<WorkspaceOfferResponse> {
    return this.request<WorkspaceOfferResponse>('POST', '/v1/workspaces', { body: offer });
  }

  /**
   * Streams an archive (`open()`, opened anew for each attempt) where `upload` says: a path is this server's
   * own route, sent like every request of this client; an absolute URL (presigned S3) gets exactly
   * `upload.headers` and none of the caller's credentials (`workspace/upload.ts`).
   *
   * @throws ApiError when the server or S3 refuses the bytes (not the archive the upload was pinned to).
   */
  async sendWorkspace(upload: WorkspaceUpload, open: () => Readable): Promise<void> {
    if (upload.url.startsWith('/')) {
      await this.request('PUT', upload.url, { stream: open, headers: upload.headers });
      return;
    }
    const { putArchive } = await import('./workspace/upload.js');
    await putArchive(upload, open, {
      endpoint: this.endpoint,
      ...(this.http === undefined ? {} : { transport: this.http }),
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
    const { value, header } = await this.transport.send<AppResponse>('GET', appPath(handle), {
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
   * The local server's `POST /ui/link`: a new one-time link to its dashboard (see `dashboard/one-time-link.ts`), asked
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
    return this.transport.ownServer();
  }

  /** Builds the full URL of `path` with `query` (arrays become repeated parameters). */
  urlOf(path: string, query: RequestOptions['query'] = {}): URL {
    return this.transport.urlOf(path, query);
  }

  private async request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    return (await this.transport.send<T>(method, path, options)).value;
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
