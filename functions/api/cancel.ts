/** `POST /v1/apps/{scheduler}/{appId}/cancel`: asks the scheduler to cancel; idempotent. */

import { runner } from '../schedulers/table.js';
import { apiHandler } from '../shared/middleware.js';
import { handleView } from '../shared/views.js';
import { appFromPath } from './handle.js';

export const handler = apiHandler({ operation: 'Cancel' }, async (req) => {
  const { handle, scheduler } = appFromPath(req);
  const record = await (await runner(scheduler)).cancel(handle, req.scope);
  // cancelRequestedAt tells a cancel in progress (or done) from an app that had already finished.
  const body: Record<string, unknown> = handleView(record);
  if (record.cancelRequestedAt !== undefined)
    body.cancelRequestedAt = new Date(record.cancelRequestedAt).toISOString();
  return { statusCode: 202, body };
});
