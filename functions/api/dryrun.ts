/** `POST /v1/dryrun`: the exact native request a run would submit; nothing is recorded or submitted. */
import { parseRunRequest } from '../../lib/specs/index.js';
import { planner } from '../schedulers/table.js';
import { apiHandler } from '../shared/middleware.js';

export const handler = apiHandler({ operation: 'Dryrun', body: true }, async (req) => {
  const request = parseRunRequest(req.body);
  const plans = await planner(request.scheduler);
  const info = plans.dryrunRequest(request, req.owner);
  const warnings = plans.cfgWarnings(request.scheduler, request.cfg);
  return {
    statusCode: 200,
    body: { ...info.toJSON(), text: info.format(), ...(warnings.length === 0 ? {} : { warnings }) },
  };
});
