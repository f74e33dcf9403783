/**
 * `GET /v1/apps`: the caller's apps, newest first, with filters and paging. `?owner=all` (every owner's apps)
 * and `?owner=<another owner>` are for deployment admins only.
 */
import type { ListAppsQuery } from '../../lib/runner/index.js';
import { appRecords } from '../shared/container.js';
import { apiHandler } from '../shared/middleware.js';
import { QUERIES } from '../shared/queries.js';
import { parseParams } from '../shared/query.js';
import { summaryView } from '../shared/views.js';
import { listFilters } from './list-filters.js';

export const handler = apiHandler({ operation: 'List' }, async (req) => {
  // A repeated `state` is one list.
  const { state, limit, nextToken, ...filters } = parseParams(QUERIES.List, (name) =>
    name === 'state' ? req.queryAll(name).join(',') : req.query(name),
  );
  const query: ListAppsQuery = listFilters(filters, req.caller);
  if (state !== undefined && state.length > 0) query.states = state;
  if (limit !== undefined) query.limit = limit;
  if (nextToken) query.nextToken = nextToken;
  const page = await appRecords().list(query);
  const body: Record<string, unknown> = { apps: page.records.map(summaryView) };
  if (page.nextToken) body.nextToken = page.nextToken;
  return { statusCode: 200, body };
});
