/** The app handle a `/v1/apps/{scheduler}/{appId}` path names. */
import { checkAppId } from '../../lib/schedulers/app-ids.js';
import { makeAppHandle, SCHEDULER_NAME_PATTERN, ValidationError } from '../../lib/specs/index.js';
import { requireSchedulerName, sessionName } from '../shared/container.js';
import type { ApiRequest } from '../shared/middleware.js';

/**
 * The path parameter `name`, decoded once. The raw value must be the decoded value itself or exactly its
 * percent-encoding (hex case aside): `%2541` (an encoded `%`) or an encoded letter such as `%41` would
 * otherwise be a second spelling of an app id.
 */
function canonicalParam(req: ApiRequest, name: string): string {
  const raw = req.event.pathParameters?.[name] ?? '';
  const value = req.path(name);
  if (raw !== value && encodeURIComponent(value).toUpperCase() !== raw.toUpperCase()) {
    throw ValidationError.forField(
      name,
      'is not canonically encoded: percent-encode only the characters that need it (as encodeURIComponent does)',
    );
  }
  return value;
}

/** The app a path names: its handle, and its scheduler (the module a refresh, cancel or logs loads). */
export interface AppAddress {
  readonly handle: string;
  readonly scheduler: string;
}

/**
 * Records are keyed by scheduler and app id; the session part of a handle does not select a different app,
 * so the path needs no session. Both parts are validated here: the scheduler's charset, and the app id's
 * shape for that scheduler (`lib/schedulers/app-ids.ts`), so one spelling reaches one app.
 *
 * @throws ValidationError naming `scheduler` or `appId`.
 */
export function appFromPath(req: ApiRequest): AppAddress {
  const scheduler = canonicalParam(req, 'scheduler');
  if (!SCHEDULER_NAME_PATTERN.test(scheduler)) {
    throw ValidationError.forField('scheduler', 'must be a scheduler name such as local_cwd or aws_batch');
  }
  const appId = canonicalParam(req, 'appId');
  checkAppId(scheduler, appId);
  // After the id's own checks: a malformed id is named as such whatever the scheduler.
  requireSchedulerName(scheduler);
  return { handle: makeAppHandle(scheduler, sessionName(), appId), scheduler };
}
