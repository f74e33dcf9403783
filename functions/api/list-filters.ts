/**
 * The filters `GET /v1/apps` and `GET /v1/apps/counts` share: owner, scheduler, session and since, parsed
 * by their schema (`APP_FILTERS`) with errors that name the parameter.
 */
import type * as z from 'zod/mini';
import { ALL_OWNERS, type CountAppsQuery } from '../../lib/runner/index.js';
import { requireSchedulerName } from '../shared/container.js';
import { HttpRequestError } from '../shared/http-errors.js';
import type { ApiRequest } from '../shared/middleware.js';
import { APP_FILTERS } from '../shared/queries.js';
import { parseParams } from '../shared/query.js';

/** The filters, as {@link APP_FILTERS} parses them. */
export type AppFilters = z.output<typeof APP_FILTERS>;

/** The listing query of parsed filters, for `caller`. */
export function listFilters(filters: AppFilters, caller: ApiRequest['caller']): CountAppsQuery {
  const query: CountAppsQuery = { owner: ownerParam(filters.owner, caller) };
  if (filters.scheduler) {
    requireSchedulerName(filters.scheduler);
    query.scheduler = filters.scheduler;
  }
  if (filters.session) query.session = filters.session;
  if (filters.since) query.since = filters.since.getTime();
  return query;
}

/** The listing query of a request's filters. */
export function listFiltersOf(req: ApiRequest): CountAppsQuery {
  return listFilters(
    parseParams(APP_FILTERS, (name) => req.query(name)),
    req.caller,
  );
}

/** The owner a listing covers: the caller's own unless an admin asks for another owner or for `all`. */
function ownerParam(
  raw: string | undefined,
  caller: { owner: string; admin: boolean },
): CountAppsQuery['owner'] {
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
