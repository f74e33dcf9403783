import { describe, expect, it } from 'vitest';
import { apiHandler } from '../../../functions/shared/middleware.js';
import { apiEvent, lambdaContext } from '../../reliability/helpers/lambda.js';

const echo = apiHandler({ operation: 'Dryrun', body: true }, async (req) => ({
  statusCode: 200,
  body: { got: req.body },
}));

/** The status and error code of a POST with `raw` as its body and `contentType`. */
async function post(raw: string, contentType: string) {
  const event = apiEvent({
    method: 'POST',
    resource: '/v1/dryrun',
    raw,
    headers: { 'Content-Type': contentType },
  });
  const reply = await echo(event, lambdaContext('body-test'));
  return { status: reply.statusCode, body: JSON.parse(reply.body) as Record<string, { code?: string }> };
}

describe('a request body', () => {
  it('is parsed when it is JSON of a JSON media type (parameters and +json included)', async () => {
    expect((await post('{"a":1}', 'application/json; charset=utf-8')).body).toEqual({ got: { a: 1 } });
    expect((await post('[1]', 'application/merge-patch+json')).body).toEqual({ got: [1] });
  });

  it('of another media type is refused as UnsupportedMediaType (415), before it is parsed', async () => {
    const reply = await post('{"a":1}', 'text/plain');
    expect(reply.status).toBe(415);
    expect(reply.body.error?.code).toBe('UnsupportedMediaType');
  });

  it('that is not JSON is refused as InvalidJson (400)', async () => {
    const reply = await post('{"a":', 'application/json');
    expect(reply.status).toBe(400);
    expect(reply.body.error?.code).toBe('InvalidJson');
  });
});
