/** `DELETE /v1/apps/{scheduler}/{appId}`: removes the app from the scheduler's data plane, cancelling it if live. */

import { runner } from '../schedulers/table.js';
import { apiHandler } from '../shared/middleware.js';
import { handleView } from '../shared/views.js';
import { appFromPath } from './handle.js';

export const handler = apiHandler({ operation: 'Delete' }, async (req) => {
  const { handle, scheduler } = appFromPath(req);
  const record = await (await runner(scheduler)).delete(handle, req.scope);
  return { statusCode: 202, body: handleView(record) };
});
