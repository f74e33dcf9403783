/** `GET /v1/apps`: the caller's apps, newest first, with filters and paging. */
import type { ListAppsQuery } from '../../lib/runner/index.js';
import { type AppState, isAppState, ValidationError } from '../../lib/specs/index.js';
import { recordsRunner, requireSchedulerName } from '../shared/container.js';
import { apiHandler } from '../shared/middleware.js';
import { intParam, timeParam } from '../shared/query.js';
import { summaryView } from '../shared/views.js';

export const handler = apiHandler({ operation: 'List' }, async (req) => {
  const query: ListAppsQuery = { owner: req.owner };
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
