/**
 * Reliability: when every state-change event is lost, one reconciler pass brings each record to the state
 * its scheduler reports (Batch and SageMaker, through the deployed functions).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FunctionsEnvironment, startFunctionsEnvironment } from './helpers/environment.js';
import { invoke } from './helpers/lambda.js';
import { BATCH_RUN, SAGEMAKER_RUN } from './helpers/requests.js';

let env: FunctionsEnvironment;
beforeAll(async () => {
  env = await startFunctionsEnvironment();
});
afterAll(() => env.close());

const BATCH = BATCH_RUN;
const SAGEMAKER = SAGEMAKER_RUN;

describe('dropped events', () => {
  it('one reconciler pass brings 40 apps to their schedulers’ states', async () => {
    const batchStates = ['RUNNABLE', 'RUNNING', 'SUCCEEDED', 'FAILED'] as const;
    const trainingStates = ['InProgress', 'Completed', 'Failed', 'Stopped'] as const;
    const want = new Map<string, string>();
    for (let i = 0; i < 20; i++) {
      const reply = await invoke(env.api.Run, { method: 'POST', resource: '/v1/apps', body: BATCH });
      expect(reply.statusCode).toBe(201);
      const jobName = String(reply.body.appId).split(':')[1] as string;
      const status = batchStates[i % batchStates.length] as (typeof batchStates)[number];
      env.aws.setBatchStatus(jobName, status);
      want.set(
        String(reply.body.handle),
        { RUNNABLE: 'PENDING', RUNNING: 'RUNNING', SUCCEEDED: 'SUCCEEDED', FAILED: 'FAILED' }[status],
      );
    }
    for (let i = 0; i < 20; i++) {
      const reply = await invoke(env.api.Run, { method: 'POST', resource: '/v1/apps', body: SAGEMAKER });
      expect(reply.statusCode, JSON.stringify(reply.body)).toBe(201);
      const status = trainingStates[i % trainingStates.length] as (typeof trainingStates)[number];
      env.aws.setTrainingStatus(String(reply.body.appId), status);
      want.set(
        String(reply.body.handle),
        { InProgress: 'RUNNING', Completed: 'SUCCEEDED', Failed: 'FAILED', Stopped: 'CANCELLED' }[status],
      );
    }
    const report = await env.reconcileAll();
    expect(report.aws_batch?.errors).toBe(0);
    expect(report.aws_sagemaker?.errors).toBe(0);
    const wrong: string[] = [];
    for (const [handle, state] of want) {
      const record = await env.container.store().records.get(handle);
      if (record?.state !== state) wrong.push(`${handle}: ${record?.state}, scheduler says ${state}`);
    }
    expect(wrong).toEqual([]);
  });
});
