/** `POST /v1/apps/{scheduler}/{appId}/cancel`: asks the scheduler to cancel; idempotent. */
import { runner } from '../shared/container.js';
import { apiHandler } from '../shared/middleware.js';
import { handleView } from '../shared/views.js';
import { handleFromPath } from './handle.js';

export const handler = apiHandler({ operation: 'Cancel' }, async (req) => {
  const record = await runner().cancel(handleFromPath(req), req.scope);
  return { statusCode: 202, body: handleView(record) };
});
