/** `POST /v1/dryrun`: the exact native request a run would submit; nothing is recorded or submitted. */
import { parseRunRequest } from '../../lib/specs/index.js';
import { runner } from '../shared/container.js';
import { apiHandler } from '../shared/middleware.js';

export const handler = apiHandler({ operation: 'Dryrun', body: true }, async (req) => {
  const info = runner().dryrunRequest(parseRunRequest(req.body), req.owner);
  return { statusCode: 200, body: { ...info.toJSON(), text: info.format() } };
});
