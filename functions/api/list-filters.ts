/**
 * The filters `GET /v1/apps` and `GET /v1/apps/counts` share: owner, scheduler, session and since, parsed
 * from the query string with errors that name the parameter.
 */
import { ALL_OWNERS, type CountAppsQuery } from '../../lib/runner/index.js';
import {
  SCHEDULER_NAME_PATTERN,
  SESSION_NAME_PATTERN,
  SESSION_NAME_RULE,
  ValidationError,
} from '../../lib/specs/index.js';
import { requireSchedulerName } from '../shared/container.js';
import { HttpRequestError } from '../shared/http-errors.js';
import type { ApiRequest } from '../shared/middleware.js';
import { timeParam } from '../shared/query.js';

/** The owner, scheduler, session and since filters of a listing request. */
export function listFilters(req: ApiRequest): CountAppsQuery {
  const query: CountAppsQuery = { owner: ownerParam(req.query('owner'), req.caller) };
  const scheduler = req.query('scheduler');
  const session = req.query('session');
  const since = timeParam('since', req.query('since'));
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
  return query;
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
