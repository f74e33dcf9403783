/**
 * Reliability: the run function under lost DynamoDB responses, hung backends and bad bodies, through the
 * deployed handler (dynalite store with faults injected under the SDK's own retries, fake Batch at the wire).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FunctionsEnvironment, startFunctionsEnvironment } from './helpers/environment.js';
import { apiEvent, invoke, lambdaContext } from './helpers/lambda.js';
import { BATCH_RUN } from './helpers/requests.js';

let env: FunctionsEnvironment;
beforeAll(async () => {
  env = await startFunctionsEnvironment();
});
afterAll(() => env.close());

const run = (key: string, body: unknown = BATCH_RUN) =>
  invoke(env.api.Run, { method: 'POST', resource: '/v1/apps', body, headers: { 'Idempotency-Key': key } });

const writesOf = (calls: Record<string, number>) =>
  Object.entries(calls).filter(([name]) => !/^(Get|Query|BatchGet)/.test(name));

describe('POST /v1/apps with an Idempotency-Key', () => {
  it('submits once and answers 201 when the reservation PutItem response is lost (the SDK retry sees its own write)', async () => {
    env.aws.takeCalls();
    env.loseNextDynamoResponse('PutItemCommand', true);
    const first = await run('lost-put');
    expect(first.statusCode, JSON.stringify(first.body)).toBe(201);
    const retry = await run('lost-put');
    expect(retry.statusCode).toBe(201);
    expect(retry.body.handle).toBe(first.body.handle);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(env.aws.takeCalls()['Batch.SubmitJob']).toBe(1);
  });

  it('costs zero DynamoDB writes and no submission for a body that cannot run', async () => {
    env.aws.takeCalls();
    env.takeDynamoCalls();
    const reply = await run('bad-body', { ...BATCH_RUN, cfg: {} });
    expect(reply.statusCode).toBe(400);
    expect(JSON.stringify(reply.body)).toMatch(/queue/);
    expect(writesOf(env.takeDynamoCalls())).toEqual([]);
    expect(env.aws.takeCalls()).toEqual({});
    // The key was not spent: the corrected request runs.
    expect((await run('bad-body')).statusCode).toBe(201);
  });
});

describe('POST /v1/apps when the backend hangs', () => {
  it('answers 503 SubmissionOutcomeUnknown with the handle before the deadline, and the reconciler settles the record', async () => {
    env.aws.hangNext = 'SubmitJob';
    const context = { ...lambdaContext(), getRemainingTimeInMillis: () => 3_300 };
    const result = await env.api.Run(
      apiEvent({
        method: 'POST',
        resource: '/v1/apps',
        body: BATCH_RUN,
        headers: { 'Idempotency-Key': 'hung-submit' },
      }),
      context,
    );
    expect(result.statusCode).toBe(503);
    const error = (JSON.parse(result.body) as { error: { code: string; handle: string } }).error;
    expect(error.code).toBe('SubmissionOutcomeUnknown');
    expect(error.handle).toMatch(/^aws_batch:\/\/torchx\/ml-gpu-queue:/);

    const status = await invoke(env.api.Status, {
      method: 'GET',
      resource: '/v1/apps/{scheduler}/{appId}',
      pathParameters: { scheduler: 'aws_batch', appId: error.handle.split('/').pop() ?? '' },
    });
    expect((status.body.status as { state: string }).state).toBe('UNSUBMITTED');
    const retry = await run('hung-submit');
    expect(retry.statusCode).toBe(201);
    expect(retry.body.handle).toBe(error.handle);

    await env.reconcileAll();
    const settled = await invoke(env.api.Status, {
      method: 'GET',
      resource: '/v1/apps/{scheduler}/{appId}',
      pathParameters: { scheduler: 'aws_batch', appId: error.handle.split('/').pop() ?? '' },
    });
    expect((settled.body.status as { state: string }).state).toBe('PENDING');
  });
});
