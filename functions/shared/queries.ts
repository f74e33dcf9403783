/**
 * The query parameters (and headers) of each API route, as zod schemas: the handlers parse requests with
 * them and `scripts/openapi-document.ts` documents them, so a bound, a pattern or a description is written
 * once, here.
 */
import * as z from 'zod/mini';
import { MAX_WAIT_SECONDS, REVISION_PATTERN } from '../../lib/runner/revision.js';
import {
  type AppState,
  isAppState,
  SCHEDULER_NAME_PATTERN,
  SESSION_NAME_PATTERN,
  SESSION_NAME_RULE,
} from '../../lib/specs/index.js';
import {
  enumParam,
  flagParam,
  intParam,
  type ParamsSchema,
  patternParam,
  textParam,
  timeParam,
} from './query.js';

const NEXT_TOKEN = textParam('the nextToken of the previous page');

/** The filters of `GET /v1/apps` that `GET /v1/apps/counts` shares. */
export const APP_FILTERS = z.object({
  scheduler: patternParam(
    SCHEDULER_NAME_PATTERN,
    () => 'must be a scheduler name such as local_cwd or aws_batch',
    'only apps of this scheduler',
  ),
  session: patternParam(SESSION_NAME_PATTERN, () => SESSION_NAME_RULE, 'only apps of this session'),
  since: timeParam('only apps created at or after this time'),
  owner: textParam("deployment admins: all (every owner's apps) or another owner"),
});

/** App states, comma-separated (a repeated parameter is read as one list), upper-cased. */
const states = z.optional(
  z
    .pipe(
      z.string(),
      z.transform((raw: string, ctx): AppState[] => {
        const list = raw.split(',');
        const unknown = list.find((state) => !isAppState(state.toUpperCase()));
        if (unknown !== undefined) {
          ctx.issues.push({
            code: 'custom',
            input: raw,
            message: `unknown state '${unknown}'; use PENDING, RUNNING, SUCCEEDED, FAILED, CANCELLED, …`,
          });
        }
        return list.map((state) => state.toUpperCase() as AppState);
      }),
    )
    .register(z.globalRegistry, {
      description: 'only apps in these states (comma-separated, e.g. RUNNING,PENDING)',
    }),
);

/** The query of each route that has one, by route name. */
export const QUERIES = {
  List: z.object({
    ...APP_FILTERS.shape,
    state: states,
    limit: intParam(1, 100, 'page size'),
    nextToken: NEXT_TOKEN,
  }),
  Counts: APP_FILTERS,
  Status: z.object({
    refresh: flagParam('ask the scheduler before answering'),
    waitFor: patternParam(
      REVISION_PATTERN,
      (raw) =>
        `must be the \`revision\` of an earlier answer about this app (22 characters of A-Z a-z 0-9 _ -), got '${raw}'`,
      'the revision of an earlier answer: answer once the record has another revision, or after ' +
        'waitSeconds (local mode holds the request; the deployed API answers at once, without the ' +
        'Long-Polled header). Not with refresh',
    ),
    waitSeconds: intParam(1, MAX_WAIT_SECONDS, `with waitFor: longest wait (default ${MAX_WAIT_SECONDS})`),
  }),
  Logs: z.object({
    role: textParam('role name (default: the first role)'),
    replica: intParam(0, 100_000, 'replica id'),
    regex: textParam('only lines matching this regular expression'),
    since: timeParam('only lines at or after this time'),
    until: timeParam('only lines before this time'),
    streams: enumParam(['combined', 'stdout', 'stderr'], 'which output streams'),
    limit: intParam(1, 10_000, 'page size (lines)'),
    nextToken: NEXT_TOKEN,
  }),
} satisfies Readonly<Record<string, ParamsSchema>>;

/** The request headers of each route that reads one, by route name. */
export const HEADERS = {
  Run: z.object({
    'Idempotency-Key': patternParam(
      /^[\x21-\x7e]{1,255}$/,
      () => 'must be 1–255 printable ASCII characters without spaces',
      'retries with the same key return the first answer',
    ),
  }),
} satisfies Readonly<Record<string, ParamsSchema>>;
