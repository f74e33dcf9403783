/** The page's API client: same-origin `fetch` to `/v1/…` (the local server, or `txs ui`'s signing proxy). */
import type {
  AppActionResponse,
  AppCountsResponse,
  AppResponse,
  ComponentsResponse,
  DryRunResponse,
  ListAppsResponse,
  LogPageResponse,
  RunResponse,
  SchedulerInfo,
} from '../lib/specs/api.js';
import { answerRetryable } from '../lib/specs/errors.js';
import { encodeSegment } from './route.js';

/** An error answered by the API, with its own words. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Array<{ path: string; message: string }> = [],
    readonly requestId?: string,
    /**
     * Whether asking again may succeed: the API's `error.retryable`; for an answer without it (API Gateway's
     * own, or no answer at all) a lost connection or a 429/502/503/504.
     */
    readonly retryable = status === 0 || answerRetryable(status, undefined),
  ) {
    super(message);
  }
}

async function call<T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      headers: {
        accept: 'application/json',
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'same-origin',
    });
  } catch (error) {
    throw new ApiError(0, 'NetworkError', `the server did not answer (${String(error)})`);
  }
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text === '' ? {} : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (!res.ok) {
    const error = (
      parsed as {
        error?: { code?: string; message?: string; details?: []; requestId?: string; retryable?: boolean };
      }
    )?.error;
    // API Gateway's own errors are `{ message }`; anything else is shown as sent.
    const message =
      error?.message ??
      (parsed as { message?: string } | undefined)?.message ??
      (text.slice(0, 500) || res.statusText);
    throw new ApiError(
      res.status,
      error?.code ?? `HTTP ${res.status}`,
      message,
      error?.details ?? [],
      error?.requestId,
      answerRetryable(res.status, error?.retryable),
    );
  }
  if (parsed === undefined) throw new ApiError(res.status, 'InvalidResponse', 'the server answered non-JSON');
  return parsed as T;
}

/** `scheduler/appId` as a path, each segment encoded. */
export function appPath(scheduler: string, appId: string): string {
  return `/v1/apps/${encodeSegment(scheduler)}/${encodeSegment(appId)}`;
}

/** A run or dry-run request body. */
export interface RunRequest {
  scheduler: string;
  cfg?: Record<string, unknown>;
  session?: string;
  app?: unknown;
  component?: string;
  args?: string[];
  /** The workspace archive the replicas start in (`txs run --workspace`), by its SHA-256. */
  workspace?: { sha256: string };
}

export const api = {
  list: (query: URLSearchParams) => call<ListAppsResponse>('GET', `/v1/apps?${query}`),
  counts: (query: URLSearchParams) => call<AppCountsResponse>('GET', `/v1/apps/counts?${query}`),
  app: (scheduler: string, appId: string) => call<AppResponse>('GET', appPath(scheduler, appId)),
  cancel: (scheduler: string, appId: string) =>
    call<AppActionResponse>('POST', `${appPath(scheduler, appId)}/cancel`),
  remove: (scheduler: string, appId: string) => call<AppActionResponse>('DELETE', appPath(scheduler, appId)),
  logs: (scheduler: string, appId: string, query: URLSearchParams) =>
    call<LogPageResponse>('GET', `${appPath(scheduler, appId)}/logs?${query}`),
  dryrun: (request: RunRequest) => call<DryRunResponse>('POST', '/v1/dryrun', request),
  run: (request: RunRequest, idempotencyKey: string) =>
    call<RunResponse>('POST', '/v1/apps', request, { 'idempotency-key': idempotencyKey }),
  schedulers: () => call<{ schedulers: SchedulerInfo[] }>('GET', '/v1/schedulers'),
  components: () => call<ComponentsResponse>('GET', '/v1/components'),
  /** Ends this browser's session on the server and clears its cookie. */
  logout: () => call<{ loggedOut: boolean }>('POST', '/ui/logout'),
};

/** Renders an error as the API worded it: code, message, the fields named, the request id. */
export function errorBox(error: unknown): HTMLElement {
  const box = document.createElement('div');
  box.className = 'error';
  box.setAttribute('role', 'alert');
  const e =
    error instanceof ApiError
      ? error
      : new ApiError(0, 'Error', error instanceof Error ? error.message : String(error));
  const head = document.createElement('strong');
  head.textContent = `${e.code}${e.status ? ` (${e.status})` : ''}: `;
  box.append(head, e.message);
  if (e.details.length > 0) {
    const list = document.createElement('ul');
    for (const d of e.details) {
      const item = document.createElement('li');
      const code = document.createElement('code');
      code.textContent = d.path;
      item.append(code, ` ${d.message}`);
      list.append(item);
    }
    box.append(list);
  }
  if (e.requestId) {
    const rid = document.createElement('small');
    rid.textContent = ` request id ${e.requestId}`;
    box.append(rid);
  }
  return box;
}
