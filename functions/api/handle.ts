/** The app handle a `/v1/apps/{scheduler}/{appId}` path names. */
import { makeAppHandle } from '../../lib/specs/index.js';
import { requireSchedulerName, sessionName } from '../shared/container.js';
import type { ApiRequest } from '../shared/middleware.js';

/**
 * Records are keyed by scheduler and app id; the session part of a handle does not select a different app,
 * so the path needs no session.
 */
export function handleFromPath(req: ApiRequest): string {
  requireSchedulerName(req.path('scheduler'));
  return makeAppHandle(req.path('scheduler'), sessionName(), req.path('appId'));
}
