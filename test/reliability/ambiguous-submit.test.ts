/**
 * Reliability: a submission whose outcome is unknown (the SubmitJob call timed out after Batch accepted it)
 * must leave a record the reconciler can find, not a FAILED record next to a running job.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FunctionsEnvironment, startFunctionsEnvironment } from './helpers/environment.js';
import { invoke } from './helpers/lambda.js';

let env: FunctionsEnvironment;
beforeAll(async () => {
  env = await startFunctionsEnvironment();
});
afterAll(() => env.close());

const BODY = {
  scheduler: 'aws_batch',
  component: 'utils.echo',
  args: ['--msg', 'hi'],
  cfg: { queue: 'ml-gpu-queue' },
};

async function recordOf(jobName: string) {
  return env.container.store().queries.findByNativeName('aws_batch', jobName);
}

describe('Run when SubmitJob times out', () => {
  it('after Batch accepted the job: answers 503, keeps the record UNSUBMITTED, and the reconciler finds the job', async () => {
    env.aws.nextTimeout = { action: 'SubmitJob', afterAccept: true };
    const reply = await invoke(env.api.Run, { method: 'POST', resource: '/v1/apps', body: BODY });
    expect(reply.statusCode).toBe(503);
    const error = reply.body.error as { code: string; message: string };
    expect(error.code).toBe('SubmissionOutcomeUnknown');
    expect(error.message).toMatch(/may not have reached the scheduler/);
    expect(error.message).not.toMatch(/SubmitJob|TimeoutError/); // AWS's own text stays in the log
    const [job] = [...env.aws.batchJobs.values()];
    if (!job) throw new Error('the fake Batch saw no submission');
    const before = await recordOf(job.jobName);
    expect(before?.state).toBe('UNSUBMITTED');
    const active = await env.container.store().queries.listActive('aws_batch', 100);
    expect(active.records.map((r) => r.handle)).toContain(before?.handle);

    env.aws.setBatchStatus(job.jobName, 'RUNNING');
    await env.reconcileAll();
    expect((await recordOf(job.jobName))?.state).toBe('RUNNING');
  });

  it('before Batch saw it: answers 503 and the record stays findable until the grace period settles it', async () => {
    const jobsBefore = env.aws.batchJobs.size;
    env.aws.nextTimeout = { action: 'SubmitJob', afterAccept: false };
    const reply = await invoke(env.api.Run, { method: 'POST', resource: '/v1/apps', body: BODY });
    expect(reply.statusCode).toBe(503);
    expect(reply.headers['retry-after']).toBe('5');
    expect(env.aws.batchJobs.size).toBe(jobsBefore);
    const list = await invoke(env.api.List, { method: 'GET', resource: '/v1/apps' });
    const states = (list.body.apps as { state: string }[]).map((a) => a.state);
    expect(states).toContain('UNSUBMITTED');
  });
});
