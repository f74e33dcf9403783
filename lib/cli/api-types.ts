/**
 * The CLI's view of the HTTP API v1 (`docs/http-api.md`): request and response bodies as they travel.
 *
 * @module
 */
import type { ComponentDescription } from '../components/index.js';
import type { AppDef, AppState, AppStatusData, Cfg, RunOptDescription } from '../specs/index.js';

/** What a scheduler supports (`GET /v1/schedulers`). */
export interface SchedulerCapabilities {
  cancel: boolean;
  logs: boolean;
  describe: string;
  distributed: boolean;
  mounts: boolean;
  retries: boolean;
  elasticity: boolean;
}

/** One scheduler of `GET /v1/schedulers`. */
export interface SchedulerInfo {
  name: string;
  capabilities?: Partial<SchedulerCapabilities>;
  runOpts: RunOptDescription[];
}

/** Body of `POST /v1/apps` and `POST /v1/dryrun`. */
export type RunRequestBody =
  | { scheduler: string; cfg?: Cfg; session?: string; app: AppDef }
  | { scheduler: string; cfg?: Cfg; session?: string; component: string; args: string[] };

/** `POST /v1/dryrun` → 200. */
export interface DryRunResponse {
  scheduler: string;
  app: AppDef;
  cfg: Cfg;
  request: unknown;
  text?: string;
  /** Present when something in the request was ignored, e.g. a `cfg` key that is not a run option. */
  warnings?: string[];
}

/** `POST /v1/apps` → 201. */
export interface RunResponse {
  handle: string;
  scheduler: string;
  session: string;
  appId: string;
  state: AppState;
  /** Present when something in the request was ignored, e.g. a `cfg` key that is not a run option. */
  warnings?: string[];
}

/** One app of `GET /v1/apps`. */
export interface AppSummary {
  handle: string;
  scheduler: string;
  session: string;
  appId: string;
  name: string;
  owner?: string;
  state: AppState;
  reason?: string;
  createdAt: string | number;
  updatedAt?: string | number;
}

/** `GET /v1/apps` → 200. */
export interface ListAppsResponse {
  apps: AppSummary[];
  nextToken?: string;
}

/** Query of `GET /v1/apps`. */
export interface ListAppsQuery {
  scheduler?: string;
  states?: AppState[];
  session?: string;
  since?: string;
  limit?: number;
  nextToken?: string;
  /** Deployment admins only: `all` for every owner's apps, or one other owner. */
  owner?: string;
}

/** One accepted state change. */
export interface HistoryEntryData {
  from: AppState;
  to: AppState;
  time: string | number;
  source?: string;
  reason?: string;
}

/** `GET /v1/apps/{scheduler}/{appId}` → 200. */
export interface AppResponse {
  handle: string;
  scheduler: string;
  session: string;
  appId: string;
  name: string;
  owner?: string;
  createdAt: string | number;
  updatedAt?: string | number;
  status: AppStatusData;
  app: AppDef;
  cfg?: Cfg;
  history?: HistoryEntryData[];
  cancelRequestedAt?: string | number;
}

/** `POST …/cancel` and `DELETE …` → 202. */
export interface AppActionResponse {
  handle: string;
  state: AppState;
  /** Cancel only: when a cancel was first requested; absent when the app had finished before any. */
  cancelRequestedAt?: string;
}

/** Which output streams to read. */
export type LogStreams = 'combined' | 'stdout' | 'stderr';

/** Query of `GET /v1/apps/{scheduler}/{appId}/logs`. */
export interface LogQuery {
  role?: string;
  replica?: number;
  regex?: string;
  since?: string;
  until?: string;
  streams?: LogStreams;
  limit?: number;
  nextToken?: string;
}

/** `GET …/logs` → 200. */
export interface LogPageResponse {
  lines: string[];
  nextToken?: string;
  caughtUp?: boolean;
}

/** `GET /v1/components` → 200. */
export interface ComponentsResponse {
  components: ComponentDescription[];
}

/** The error body of every 4xx/5xx answer of the API. */
export interface ApiErrorBody {
  error: {
    code: string;
    message: string;
    details?: { path: string; message: string }[];
    requestId?: string;
  };
}
