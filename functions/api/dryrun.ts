/** `POST /v1/dryrun`: the exact native request a run would submit; nothing is recorded or submitted. */
import { type JobWorkspace, parseRunRequest } from '../../lib/specs/index.js';
import { planner } from '../schedulers/table.js';
import { apiHandler } from '../shared/middleware.js';
import { dryrunWorkspace } from '../workspaces/resolve.js';

/** The workspace as the scheduler receives it (without the dry run's `stored`). */
function jobWorkspace({ stored: _, ...workspace }: JobWorkspace & { stored: boolean }): JobWorkspace {
  return workspace;
}

export const handler = apiHandler({ operation: 'Dryrun', body: true }, async (req) => {
  const request = parseRunRequest(req.body);
  const plans = await planner(request.scheduler);
  const workspace = await dryrunWorkspace(request, req.owner);
  const info = plans.dryrunRequest(request, req.owner, workspace && jobWorkspace(workspace));
  const warnings = plans.cfgWarnings(request.scheduler, request.cfg);
  return {
    statusCode: 200,
    body: {
      ...info.toJSON(),
      text: info.format(),
      ...(warnings.length === 0 ? {} : { warnings }),
      ...(workspace === undefined ? {} : { workspace }),
    },
  };
});
