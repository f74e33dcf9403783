/** `POST /v1/apps`: validate, record, submit; idempotent with an `Idempotency-Key` header. */
import { parseRunRequest } from '../../lib/specs/index.js';
import { runner } from '../schedulers/table.js';
import { apiHandler } from '../shared/middleware.js';
import { HEADERS } from '../shared/queries.js';
import { parseParams } from '../shared/query.js';
import { handleView } from '../shared/views.js';
import { withWorkspace } from '../workspaces/resolve.js';

/** Time kept after the submission deadline to write the outcome and answer (ms). */
const SUBMISSION_DEADLINE_MARGIN_MS = 3000;
/** Longest a submission may take, whatever time Lambda has left (ms): API Gateway gives up after 29 s. */
const MAX_SUBMISSION_MS = 25_000;

export const handler = apiHandler({ operation: 'Run', body: true }, async (req, context) => {
  const { 'Idempotency-Key': key } = parseParams(HEADERS.Run, (name) => req.header(name.toLowerCase()), {
    keepEmpty: true,
  });
  const request = parseRunRequest(req.body);
  const { workspace } = await withWorkspace(request, req.owner);
  // Answer before API Gateway's 29 s limit: a submission still in flight at the deadline answers 503
  // SubmissionOutcomeUnknown with the handle. The idempotency lease ends when Lambda stops this invocation.
  const now = Date.now();
  const remaining = context.getRemainingTimeInMillis();
  const ctx = {
    owner: req.owner,
    ...(workspace === undefined ? {} : { workspace }),
    deadline: now + Math.min(remaining - SUBMISSION_DEADLINE_MARGIN_MS, MAX_SUBMISSION_MS),
    leaseUntil: now + remaining,
  };
  const runs = await runner(request.scheduler);
  const result = await runs.runRequest(request, key === undefined ? ctx : { ...ctx, idempotencyKey: key });
  const warnings = runs.cfgWarnings(request.scheduler, request.cfg);
  return {
    statusCode: 201,
    body: warnings.length === 0 ? handleView(result.record) : { ...handleView(result.record), warnings },
    headers: result.created ? {} : ({ 'idempotent-replayed': 'true' } as Record<string, string>),
  };
});
