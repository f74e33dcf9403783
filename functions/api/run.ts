/** `POST /v1/apps`: validate, record, submit; idempotent with an `Idempotency-Key` header. */
import { parseRunRequest, ValidationError } from '../../lib/specs/index.js';
import { runner } from '../shared/container.js';
import { apiHandler } from '../shared/middleware.js';
import { handleView } from '../shared/views.js';

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

export const handler = apiHandler({ operation: 'Run', body: true }, async (req) => {
  const request = parseRunRequest(req.body);
  const key = req.header('idempotency-key');
  if (key !== undefined && !IDEMPOTENCY_KEY.test(key)) {
    throw ValidationError.forField(
      'Idempotency-Key',
      'must be 1–255 printable ASCII characters without spaces',
    );
  }
  const result = await runner().runRequest(
    request,
    key === undefined ? { owner: req.owner } : { owner: req.owner, idempotencyKey: key },
  );
  const warnings = runner().cfgWarnings(request.scheduler, request.cfg);
  return {
    statusCode: 201,
    body: warnings.length === 0 ? handleView(result.record) : { ...handleView(result.record), warnings },
    headers: result.created ? {} : ({ 'idempotent-replayed': 'true' } as Record<string, string>),
  };
});
