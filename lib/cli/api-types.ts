/**
 * The CLI's view of the HTTP API v1 (`docs/http-api.md`): the request bodies and queries it sends, and the
 * response types, inferred from the zod schemas of `lib/specs/api.ts` that the OpenAPI document
 * (`docs/openapi.json`) is generated from.
 *
 * @module
 */
import type { AppDef, AppState, Cfg } from '../specs/index.js';

export type {
  ApiErrorBody,
  AppActionResponse,
  AppCountsResponse,
  AppResponse,
  AppSummary,
  ComponentsResponse,
  DryRunResponse,
  HistoryEntryData,
  ListAppsResponse,
  LogPageResponse,
  RunResponse,
  SchedulerCapabilities,
  SchedulerInfo,
} from '../specs/index.js';

/** Body of `POST /v1/apps` and `POST /v1/dryrun`. */
export type RunRequestBody = (
  | { scheduler: string; cfg?: Cfg; session?: string; app: AppDef }
  | { scheduler: string; cfg?: Cfg; session?: string; component: string; args: string[] }
) & {
  /** The uploaded workspace archive the replicas start in. */
  workspace?: { sha256: string };
};

/** Query of `GET /v1/apps`. */
export interface ListAppsQuery {
  scheduler?: string;
  states?: AppState[];
  session?: string;
  since?: string;
  limit?: number;
  nextToken?: string;
  /** Deployment admins: `all`, or one owner. */
  owner?: string;
}

/** Query of `GET /v1/apps/counts`: a listing's filters but states and paging. */
export type AppCountsQuery = Omit<ListAppsQuery, 'states' | 'limit' | 'nextToken'>;

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
