/**
 * The HTTP API v1 response bodies as zod schemas: the one definition the OpenAPI document
 * (`docs/openapi.json`, `GET /v1/openapi.json`) is generated from and the CLI's client types are inferred
 * from. Request bodies are validated by the schemas of `schema.ts`.
 *
 * @module
 */
import * as z from 'zod/mini';
import type { AppDef } from './app-def.js';
import { APP_STATES, type AppState } from './app-state.js';
import type { Cfg, RunOptDescription } from './run-opts.js';
import { appDefSchema, cfgSchema } from './schema.js';
import type { AppStatusData } from './status.js';

const appState = z.enum(APP_STATES as [AppState, ...AppState[]]);
/** Times travel as ISO-8601 strings (epoch milliseconds are accepted from older servers). */
const time = z.union([z.string(), z.number()]);
const handleFields = {
  handle: z.string(),
  scheduler: z.string(),
  session: z.string(),
  appId: z.string(),
};

/** Why an app is in its state, in its scheduler's words, and since when (`StateReason`). */
export const stateReasonSchema = z.object({
  text: z.string(),
  /** Machine-readable part: a Batch code, SageMaker's SecondaryStatus, Slurm's state_reason, a pod condition reason. */
  code: z.optional(z.string()),
  /** ISO-8601 time the reason first appeared. */
  since: z.string(),
  source: z.string(),
});

/** How one finished attempt ended (`AttemptOutcome`). */
export const attemptOutcomeSchema = z.object({
  attempt: z.number(),
  exitCode: z.optional(z.number()),
  reason: z.optional(z.string()),
  startedAt: z.optional(z.string()),
  stoppedAt: z.optional(z.string()),
  /** True when the infrastructure ended the attempt (Spot reclaim, host termination), not the app. */
  infrastructure: z.optional(z.boolean()),
});

/** What a scheduler supports (`GET /v1/schedulers`). */
export const schedulerCapabilitiesSchema = z.object({
  cancel: z.boolean(),
  logs: z.boolean(),
  describe: z.string(),
  distributed: z.boolean(),
  mounts: z.boolean(),
  retries: z.boolean(),
  elasticity: z.boolean(),
});

const cfgValueTypes = [
  'str',
  'int',
  'float',
  'bool',
  'list[str]',
  'dict[str,str]',
  'list[dict[str,str]]',
] as const;

/** One run option of a scheduler. */
export const runOptSchema = z.object({
  name: z.string(),
  type: z.enum(cfgValueTypes),
  default: z.nullable(z.unknown()),
  required: z.boolean(),
  help: z.string(),
  aliases: z.array(z.string()),
});

/** `GET /v1/schedulers` → 200. */
export const schedulersResponseSchema = z.object({
  schedulers: z.array(
    z.object({
      name: z.string(),
      capabilities: z.optional(z.partial(schedulerCapabilitiesSchema)),
      runOpts: z.array(runOptSchema),
    }),
  ),
});

/** One builtin component of `GET /v1/components`. */
export const componentDescriptionSchema = z.object({
  name: z.string(),
  description: z.string(),
  args: z.array(
    z.object({
      name: z.string(),
      flags: z.array(z.string()),
      type: z.string(),
      default: z.unknown(),
      required: z.boolean(),
      help: z.string(),
    }),
  ),
  varargs: z.optional(z.object({ name: z.string(), help: z.string() })),
});

/** `GET /v1/components` → 200. */
export const componentsResponseSchema = z.object({ components: z.array(componentDescriptionSchema) });

/** `POST /v1/dryrun` → 200. */
export const dryRunResponseSchema = z.object({
  scheduler: z.string(),
  app: appDefSchema,
  cfg: cfgSchema,
  request: z.unknown(),
  text: z.optional(z.string()),
  /** Present when something in the request was ignored, e.g. a `cfg` key that is not a run option. */
  warnings: z.optional(z.array(z.string())),
  /**
   * The request's workspace as the job would fetch it (deployed stack): `archive` is its `s3://` URI;
   * `stored` says whether the caller has uploaded it yet (size and fileCount are 0 until then).
   */
  workspace: z.optional(
    z.object({
      sha256: z.string(),
      size: z.number(),
      fileCount: z.number(),
      archive: z.string(),
      stored: z.boolean(),
    }),
  ),
});

/** `POST /v1/apps` → 201. */
export const runResponseSchema = z.object({
  ...handleFields,
  state: appState,
  /** Present when something in the request was ignored, e.g. a `cfg` key that is not a run option. */
  warnings: z.optional(z.array(z.string())),
});

/** One app of `GET /v1/apps`. */
export const appSummarySchema = z.object({
  ...handleFields,
  name: z.string(),
  owner: z.optional(z.string()),
  state: appState,
  reason: z.optional(z.string()),
  stateReason: z.optional(stateReasonSchema),
  createdAt: time,
  updatedAt: z.optional(time),
});

/** `GET /v1/apps` → 200. */
export const listAppsResponseSchema = z.object({
  apps: z.array(appSummarySchema),
  nextToken: z.optional(z.string()),
});

/** `GET /v1/apps/counts` → 200. */
export const appCountsResponseSchema = z.object({
  /** Apps per state; states with none are absent. */
  counts: z.partialRecord(appState, z.int()),
  /** The apps counted (the sum of `counts`). */
  counted: z.int(),
  /** False when the count stopped at its cap (10,000 records read): the counts are a lower bound. */
  complete: z.boolean(),
});

/** One accepted state change of an app. */
export const historyEntrySchema = z.object({
  from: appState,
  to: appState,
  time,
  source: z.optional(z.string()),
  reason: z.optional(z.string()),
});

/** TorchX's AppStatus as plain data. */
export const appStatusSchema = z.object({
  state: appState,
  numRestarts: z.number(),
  msg: z.string(),
  structuredErrorMsg: z.string(),
  uiUrl: z.optional(z.string()),
  roles: z.array(
    z.object({
      role: z.string(),
      replicas: z.array(
        z.object({
          id: z.number(),
          state: appState,
          role: z.string(),
          hostname: z.string(),
          structuredErrorMsg: z.string(),
          exitCode: z.optional(z.number()),
          reason: z.optional(z.string()),
        }),
      ),
    }),
  ),
  stateReason: z.optional(stateReasonSchema),
  attemptOutcomes: z.optional(z.array(attemptOutcomeSchema)),
});

/** A workspace archive: its SHA-256 (its name), bytes and regular files. */
export const workspaceSummarySchema = z.object({
  sha256: z.string(),
  size: z.number(),
  fileCount: z.number(),
});

/**
 * How to send a workspace archive: `PUT` the archive's bytes to `url` with exactly `headers`. An absolute
 * `url` (a presigned S3 URL) carries its own authorization: send none of yours. A `url` that is a path
 * (`/v1/…`) is the server's own route: send it like any other request to the API.
 */
export const workspaceUploadSchema = z.object({
  method: z.literal('PUT'),
  url: z.string(),
  /** Headers the request must carry as given (the length and checksum the URL is pinned to). */
  headers: z.record(z.string(), z.string()),
  /** When the URL stops working (ISO-8601); absent: it does not expire. */
  expiresAt: z.optional(z.string()),
});

/** `POST /v1/workspaces` → 200: whether the server holds the archive, and if not, how to upload it. */
export const workspaceOfferResponseSchema = z.object({
  sha256: z.string(),
  /** True: the server holds this archive for the caller; run with it, nothing to send. */
  stored: z.boolean(),
  /** Present when `stored` is false. */
  upload: z.optional(workspaceUploadSchema),
});

/** `GET /v1/apps/{scheduler}/{appId}` → 200. */
export const appResponseSchema = z.object({
  ...handleFields,
  name: z.string(),
  owner: z.optional(z.string()),
  createdAt: time,
  updatedAt: z.optional(time),
  status: appStatusSchema,
  app: appDefSchema,
  cfg: z.optional(cfgSchema),
  /** The workspace archive the app's replicas start in (`txs run --workspace`); absent: none. */
  workspace: z.optional(workspaceSummarySchema),
  history: z.optional(z.array(historyEntrySchema)),
  /** History entries left out between the first and the newest ones (records are bounded). */
  historyElided: z.optional(z.number()),
  cancelRequestedAt: z.optional(time),
  /**
   * Changes whenever anything in the record does; send it back as `waitFor` to wait for the next change.
   * Absent from servers older than the long poll.
   */
  revision: z.optional(z.string()),
});

/** `POST …/cancel` and `DELETE …` → 202. */
export const appActionResponseSchema = z.object({
  ...handleFields,
  state: appState,
  /** Cancel only: when a cancel was first requested; absent when the app had finished before any. */
  cancelRequestedAt: z.optional(time),
});

/** `GET …/logs` → 200. */
export const logPageResponseSchema = z.object({
  lines: z.array(z.string()),
  nextToken: z.optional(z.string()),
  caughtUp: z.optional(z.boolean()),
});

/** The body of every 4xx/5xx answer of the API. */
export const apiErrorSchema = z.object({
  error: z.object({
    code: z.string(),
    message: z.string(),
    details: z.optional(z.array(z.object({ path: z.string(), message: z.string() }))),
    requestId: z.optional(z.string()),
    /**
     * Whether sending the same request again may succeed (then a `Retry-After` header says when). Clients
     * retry only when it is true; absent in answers of API Gateway itself.
     */
    retryable: z.optional(z.boolean()),
    /** `SubmissionOutcomeUnknown`: the app whose submission may or may not have been accepted. */
    handle: z.optional(z.string()),
  }),
});

/** A response type inferred from its schema, with the domain types where the wire form has more detail. */
type Wire<S extends z.ZodMiniType> = z.infer<S>;

/** What a scheduler supports. */
export type SchedulerCapabilities = Wire<typeof schedulerCapabilitiesSchema>;
/** One scheduler of `GET /v1/schedulers`. */
export type SchedulerInfo = Omit<Wire<typeof schedulersResponseSchema>['schedulers'][number], 'runOpts'> & {
  runOpts: RunOptDescription[];
};
/** `GET /v1/components` → 200. */
export type ComponentsResponse = Wire<typeof componentsResponseSchema>;
/** `POST /v1/dryrun` → 200. */
export type DryRunResponse = Omit<Wire<typeof dryRunResponseSchema>, 'app' | 'cfg'> & {
  app: AppDef;
  cfg: Cfg;
};
/** `POST /v1/apps` → 201. */
export type RunResponse = Wire<typeof runResponseSchema>;
/** One app of `GET /v1/apps`. */
export type AppSummary = Wire<typeof appSummarySchema>;
/** `GET /v1/apps` → 200. */
export type ListAppsResponse = Wire<typeof listAppsResponseSchema>;
/** `GET /v1/apps/counts` response body. */
export type AppCountsResponse = Wire<typeof appCountsResponseSchema>;
/** One accepted state change. */
export type HistoryEntryData = Wire<typeof historyEntrySchema>;
/** `GET /v1/apps/{scheduler}/{appId}` → 200. */
export type AppResponse = Omit<Wire<typeof appResponseSchema>, 'app' | 'cfg' | 'status'> & {
  app: AppDef;
  cfg?: Cfg;
  status: AppStatusData;
};
/** `POST …/cancel` and `DELETE …` → 202. */
export type AppActionResponse = Wire<typeof appActionResponseSchema>;
/** `GET …/logs` → 200. */
export type LogPageResponse = Wire<typeof logPageResponseSchema>;
/** How to send a workspace archive (`upload` of `POST /v1/workspaces`). */
export type WorkspaceUpload = Wire<typeof workspaceUploadSchema>;
/** `POST /v1/workspaces` → 200. */
export type WorkspaceOfferResponse = Wire<typeof workspaceOfferResponseSchema>;
/** The error body of every 4xx/5xx answer of the API. */
export type ApiErrorBody = Wire<typeof apiErrorSchema>;
