/**
 * `GET /v1/apps/{scheduler}/{appId}`: the app's record (one read); `?refresh=true` asks the scheduler first;
 * `?waitFor=<revision>` holds the request until the record's revision differs (local mode; the deployed
 * stack answers at once, see docs/http-api.md).
 */
import { MAX_WAIT_SECONDS } from '../../lib/runner/revision.js';
import { ValidationError } from '../../lib/specs/index.js';
import { appRecords, localModeHooks } from '../shared/container.js';
import { apiHandler } from '../shared/middleware.js';
import { QUERIES } from '../shared/queries.js';
import { parseParams } from '../shared/query.js';
import { detailView } from '../shared/views.js';
import { appFromPath } from './handle.js';

export const handler = apiHandler({ operation: 'Status' }, async (req) => {
  const { handle, scheduler } = appFromPath(req);
  const { refresh, waitFor, waitSeconds } = parseParams(QUERIES.Status, (name) => req.query(name));
  if (waitSeconds !== undefined && waitFor === undefined)
    throw ValidationError.forField(
      'waitSeconds',
      'needs waitFor=<revision>: give the revision you have seen',
    );
  if (waitFor !== undefined && refresh)
    throw ValidationError.forField('waitFor', 'cannot be combined with refresh=true; send one or the other');
  if (waitFor !== undefined) {
    const { record, waited } = await appRecords().getChanged(handle, req.scope, waitFor, {
      changes: localModeHooks().recordChanges,
      waitMs: (waitSeconds ?? MAX_WAIT_SECONDS) * 1000,
    });
    const headers: Record<string, string> = waited ? { 'long-polled': 'true' } : {};
    return { statusCode: 200, body: detailView(record), headers };
  }
  // Without refresh, status is one read of the record. The Runner and the scheduler (with its SDK client) are
  // imported only for a refresh: this function's cold start loads neither.
  const record = refresh
    ? await (await (await import('../schedulers/table.js')).runner(scheduler)).refresh(handle, req.scope)
    : await appRecords().get(handle, req.scope);
  return { statusCode: 200, body: detailView(record) };
});
