/** `GET /v1/apps/{scheduler}/{appId}`: the app's record (one read); `?refresh=true` asks the scheduler first. */
import { recordsRunner } from '../shared/container.js';
import { apiHandler } from '../shared/middleware.js';
import { boolParam } from '../shared/query.js';
import { detailView } from '../shared/views.js';
import { appFromPath } from './handle.js';

export const handler = apiHandler({ operation: 'Status' }, async (req) => {
  const { handle, scheduler } = appFromPath(req);
  // Without refresh, status is one read of the record. The Runner and the scheduler (with its SDK client) are
  // imported only for a refresh: this function's cold start loads neither.
  const record = boolParam('refresh', req.query('refresh'))
    ? await (await (await import('../shared/runners.js')).runner(scheduler)).refresh(handle, req.scope)
    : await recordsRunner().get(handle, req.scope);
  return { statusCode: 200, body: detailView(record) };
});
