/** `GET /v1/apps/{scheduler}/{appId}`: the app's record (one read); `?refresh=true` asks the scheduler first. */
import { runner } from '../shared/container.js';
import { apiHandler } from '../shared/middleware.js';
import { boolParam } from '../shared/query.js';
import { detailView } from '../shared/views.js';
import { handleFromPath } from './handle.js';

export const handler = apiHandler({ operation: 'Status' }, async (req) => {
  const handle = handleFromPath(req);
  const record = boolParam('refresh', req.query('refresh'))
    ? await runner().refresh(handle, req.owner)
    : await runner().get(handle, req.owner);
  return { statusCode: 200, body: detailView(record) };
});
