/**
 * Reliability: 100 concurrent `POST /v1/apps` with one Idempotency-Key, through the deployed run handler
 * (dynalite store, fake Batch): exactly one native submission and 100 identical handles.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { itemCount } from '../helpers/dynalite.js';
import { type FunctionsEnvironment, startFunctionsEnvironment } from './helpers/environment.js';
import { invoke } from './helpers/lambda.js';

let env: FunctionsEnvironment;
beforeAll(async () => {
  env = await startFunctionsEnvironment();
});
afterAll(() => env.close());

const BODY = {
  scheduler: 'aws_batch',
  component: 'dist.ddp',
  args: ['-j', '2x8', '--script', 'train.py'],
  cfg: { queue: 'ml-gpu-queue' },
};

describe('POST /v1/apps with one Idempotency-Key, 100 times at once', () => {
  it('submits exactly one Batch job and answers every request with the same handle', async () => {
    env.aws.takeCalls();
    const replies = await Promise.all(
      Array.from({ length: 100 }, () =>
        invoke(env.api.Run, {
          method: 'POST',
          resource: '/v1/apps',
          body: BODY,
          headers: { 'Idempotency-Key': 'train-2026-11-22' },
        }),
      ),
    );
    const calls = env.aws.takeCalls();
    expect(calls['Batch.SubmitJob']).toBe(1);
    expect(env.aws.batchJobs.size).toBe(1);
    expect(replies.map((r) => r.statusCode)).toEqual(Array(100).fill(201));
    const handles = new Set(replies.map((r) => r.body.handle));
    expect(handles.size).toBe(1);
    expect(replies.filter((r) => r.headers['idempotent-replayed'] === 'true')).toHaveLength(99);
    const [job] = [...env.aws.batchJobs.values()];
    expect([...handles][0]).toBe(`aws_batch://torchx/ml-gpu-queue:${job?.jobName}`);
  });

  it('rejects the same key with a different body (422) and submits nothing more', async () => {
    env.aws.takeCalls();
    const reply = await invoke(env.api.Run, {
      method: 'POST',
      resource: '/v1/apps',
      body: { ...BODY, args: ['-j', '1x1', '--script', 'other.py'] },
      headers: { 'Idempotency-Key': 'train-2026-11-22' },
    });
    expect(reply.statusCode).toBe(422);
    expect((reply.body.error as { code: string }).code).toBe('IdempotencyConflict');
    expect(env.aws.takeCalls()['Batch.SubmitJob']).toBeUndefined();
  });
});

describe('POST /v1/apps replaying the Idempotency-Key of a submission AWS refused', () => {
  it('answers the same error again, submits nothing and writes no item', async () => {
    env.aws.refuse = { action: 'SubmitJob', message: 'jobQueue ml-gpu-queue is DISABLED' };
    try {
      const request = {
        method: 'POST' as const,
        resource: '/v1/apps',
        body: { ...BODY, args: ['-j', '1x1', '--script', 'refused.py'] },
        headers: { 'Idempotency-Key': 'refused-2026-11-27' },
      };
      const before = await itemCount(env.db.client, env.db.tableName);
      env.aws.takeCalls();
      const first = await invoke(env.api.Run, request);
      expect(env.aws.takeCalls()['Batch.SubmitJob']).toBe(1);
      const afterFirst = await itemCount(env.db.client, env.db.tableName);
      expect(afterFirst).toBeGreaterThan(before); // the FAILED record and the completed reservation

      const second = await invoke(env.api.Run, request);
      expect(env.aws.takeCalls()['Batch.SubmitJob']).toBeUndefined();
      expect(await itemCount(env.db.client, env.db.tableName)).toBe(afterFirst);
      expect(second.statusCode).toBe(first.statusCode);
      expect(first.statusCode).toBeGreaterThanOrEqual(400);
      const { requestId: _a, ...firstError } = first.body.error as Record<string, unknown>;
      const { requestId: _b, ...secondError } = second.body.error as Record<string, unknown>;
      expect(secondError).toEqual({
        ...firstError,
        message: String(firstError.message).replace(String(_a), String(_b)),
      });
      expect(secondError.retryable).toBe(false);
      expect(second.headers['idempotent-replayed']).toBe('true');
      const failed = await invoke(env.api.List, { method: 'GET', resource: '/v1/apps' });
      const refused = (failed.body.apps as Array<{ state: string; name: string }>).filter(
        (a) => a.state === 'FAILED',
      );
      expect(refused).toHaveLength(1);
    } finally {
      env.aws.refuse = undefined;
    }
  });
});
