/**
 * `GET /v1/apps`: the caller's apps, newest first, with filters and paging. `?owner=all` (every owner's apps)
 * and `?owner=<another owner>` are for deployment admins only.
 */
import type { ListAppsQuery } from '../../lib/runner/index.js';
import { type AppState, isAppState, ValidationError } from '../../lib/specs/index.js';
import { appRecords } from '../shared/container.js';
import { apiHandler } from '../shared/middleware.js';
import { intParam } from '../shared/query.js';
import { summaryView } from '../shared/views.js';
import { listFilters } from './list-filters.js';

export const handler = apiHandler({ operation: 'List' }, async (req) => {
  const states = req.queryAll('state').flatMap((s) => s.split(','));
  for (const state of states) {
    if (!isAppState(state.toUpperCase())) {
      throw ValidationError.forField(
        'state',
        `unknown state '${state}'; use PENDING, RUNNING, SUCCEEDED, FAILED, CANCELLED, …`,
      );
    }
  }
  const query: ListAppsQuery = listFilters(req);
  if (states.length > 0) query.states = states.map((s) => s.toUpperCase() as AppState);
  const limit = intParam('limit', req.query('limit'), 1, 100);
  const nextToken = req.query('nextToken');
  if (limit !== undefined) query.limit = limit;
  if (nextToken) query.nextToken = nextToken;
  const page = await appRecords().list(query);
  const body: Record<string, unknown> = { apps: page.records.map(summaryView) };
  if (page.nextToken) body.nextToken = page.nextToken;
  return { statusCode: 200, body };
});
