/**
 * `GET /v1/apps/counts`: how many of the caller's apps are in each state, with the filters of
 * `GET /v1/apps` (scheduler, session, since; `owner` for deployment admins). One paged Query projecting the
 * state, reading at most `APP_COUNT_CAP` records: `complete: false` says the counts are a lower bound.
 */
import { appRecords } from '../shared/container.js';
import { apiHandler } from '../shared/middleware.js';
import { listFiltersOf } from './list-filters.js';

export const handler = apiHandler({ operation: 'Counts' }, async (req) => {
  const counts = await appRecords().countByState(listFiltersOf(req));
  return { statusCode: 200, body: counts };
});
