/**
 * `GET /v1/apps`: the caller's apps, newest first, with filters and paging. `?owner=all` (every owner's apps)
 * and `?owner=<another owner>` are for deployment admins only.
 */
import { ALL_OWNERS, type ListAppsQuery } from '../../lib/runner/index.js';
import {
  type AppState,
  isAppState,
  SCHEDULER_NAME_PATTERN,
  SESSION_NAME_PATTERN,
  SESSION_NAME_RULE,
  ValidationError,
} from '../../lib/specs/index.js';
import { recordsRunner, requireSchedulerName } from '../shared/container.js';
import { HttpRequestError } from '../shared/http-errors.js';
import { apiHandler } from '../shared/middleware.js';
import { intParam, timeParam } from '../shared/query.js';
import { summaryView } from '../shared/views.js';

export const handler = apiHandler({ operation: 'List' }, async (req) => {
  const query: ListAppsQuery = { owner: ownerParam(req.query('owner'), req.caller) };
  const states = req.queryAll('state').flatMap((s) => s.split(','));
  for (const state of states) {
    if (!isAppState(state.toUpperCase())) {
      throw ValidationError.forField(
        'state',
        `unknown state '${state}'; use PENDING, RUNNING, SUCCEEDED, FAILED, CANCELLED, …`,
      );
    }
  }
  if (states.length > 0) query.states = states.map((s) => s.toUpperCase() as AppState);
  const scheduler = req.query('scheduler');
  const session = req.query('session');
  const since = timeParam('since', req.query('since'));
  const limit = intParam('limit', req.query('limit'), 1, 100);
  const nextToken = req.query('nextToken');
  if (scheduler && !SCHEDULER_NAME_PATTERN.test(scheduler)) {
    throw ValidationError.forField('scheduler', 'must be a scheduler name such as local_cwd or aws_batch');
  }
  if (session && !SESSION_NAME_PATTERN.test(session))
    throw ValidationError.forField('session', SESSION_NAME_RULE);
  if (scheduler) {
    requireSchedulerName(scheduler);
    query.scheduler = scheduler;
  }
  if (session) query.session = session;
  if (since) query.since = since.getTime();
  if (limit !== undefined) query.limit = limit;
  if (nextToken) query.nextToken = nextToken;
  const page = await recordsRunner().list(query);
  const body: Record<string, unknown> = { apps: page.records.map(summaryView) };
  if (page.nextToken) body.nextToken = page.nextToken;
  return { statusCode: 200, body };
});

/** The owner a listing covers: the caller's own unless an admin asks for another owner or for `all`. */
function ownerParam(
  raw: string | undefined,
  caller: { owner: string; admin: boolean },
): ListAppsQuery['owner'] {
  if (raw === undefined || raw === '' || raw === caller.owner) return caller.owner;
  if (!caller.admin) {
    throw new HttpRequestError(
      'Forbidden',
      "Only deployment admins may list other owners' apps (owner=all or owner=<owner>); omit owner to list yours",
      [{ path: 'owner', message: "only deployment admins may list other owners' apps; omit owner" }],
    );
  }
  return raw === 'all' ? ALL_OWNERS : raw;
}
