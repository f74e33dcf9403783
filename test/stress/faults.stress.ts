/**
 * Stress: 30% of Batch, SageMaker and DynamoDB calls fail (throttling, 5xx, timeouts — some after the backend
 * or the table accepted the call) while 200 apps are run, read, listed and cancelled through the functions.
 * Invariants: every failure is a JSON error with a clear message (503 + Retry-After when it may succeed
 * later, never an anonymous 500); every accepted run has its record; every job the backend accepted has a
 * record, and after faults stop one reconciler pass brings each to the backend's state.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FunctionsEnvironment, startFunctionsEnvironment } from '../reliability/helpers/environment.js';
import { seededRandom } from '../reliability/helpers/fake-aws.js';
import { type ApiReply, invoke } from '../reliability/helpers/lambda.js';
import { BATCH_RUN, SAGEMAKER_RUN } from '../reliability/helpers/requests.js';

let env: FunctionsEnvironment;
beforeAll(async () => {
  env = await startFunctionsEnvironment();
});
afterAll(() => env.close());

const BATCH = BATCH_RUN;
const SAGEMAKER = SAGEMAKER_RUN;

describe('30% injected throttling, 5xx and timeouts on Batch, SageMaker and DynamoDB', () => {
  it('loses no record, leaves no job the reconciler cannot find, and answers every failure clearly', async () => {
    env.aws.faults = { rate: 0.3, random: seededRandom(11) };
    env.setDynamoFaults({ rate: 0.3, random: seededRandom(12) });
    const replies: { what: string; reply: ApiReply }[] = [];
    const accepted: string[] = [];
    let next = 0;
    const worker = async () => {
      while (next < 200) {
        const i = next++;
        const body = i % 2 === 0 ? BATCH : SAGEMAKER;
        const run = await invoke(env.api.Run, { method: 'POST', resource: '/v1/apps', body });
        replies.push({ what: 'run', reply: run });
        if (run.statusCode !== 201) continue;
        accepted.push(String(run.body.handle));
        const pathParameters = { scheduler: String(run.body.scheduler), appId: String(run.body.appId) };
        const resource = '/v1/apps/{scheduler}/{appId}';
        replies.push({
          what: 'status',
          reply: await invoke(env.api.Status, { method: 'GET', resource, pathParameters }),
        });
        replies.push({
          what: 'refresh',
          reply: await invoke(env.api.Status, {
            method: 'GET',
            resource,
            pathParameters,
            query: { refresh: 'true' },
          }),
        });
        replies.push({
          what: 'list',
          reply: await invoke(env.api.List, { method: 'GET', resource: '/v1/apps' }),
        });
        if (i % 5 === 0) {
          replies.push({
            what: 'cancel',
            reply: await invoke(env.api.Cancel, {
              method: 'POST',
              resource: `${resource}/cancel`,
              pathParameters,
            }),
          });
        }
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    env.aws.faults = undefined;
    env.setDynamoFaults(undefined);

    const unclear = replies.filter(({ reply }) => {
      if (reply.statusCode < 400) return false;
      const error = reply.body.error as { code?: string; message?: string } | undefined;
      if (!error?.code || !error.message || error.code === 'InternalError') return true;
      if (reply.statusCode === 503 && reply.headers['retry-after'] === undefined) return true;
      return reply.statusCode === 500;
    });
    expect(
      unclear.slice(0, 5).map((u) => `${u.what}: ${u.reply.statusCode} ${JSON.stringify(u.reply.body)}`),
    ).toEqual([]);

    const store = env.container.store();
    const lost: string[] = [];
    for (const handle of accepted) if (!(await store.records.get(handle))) lost.push(handle);
    expect(lost).toEqual([]);

    const report = await env.reconcileAll();
    const orphans: string[] = [];
    for (const job of env.aws.batchJobs.values()) {
      const record = await store.queries.findByNativeName('aws_batch', job.jobName);
      // The fake backend never finishes a job, so a record that says FAILED or is missing lost track of it.
      if (!record || record.state === 'FAILED')
        orphans.push(`batch ${job.jobName}: ${record?.state ?? 'no record'}`);
    }
    for (const job of env.aws.trainingJobs.values()) {
      const record = await store.queries.findByNativeName('aws_sagemaker', job.name);
      if (!record || record.state === 'FAILED')
        orphans.push(`sagemaker ${job.name}: ${record?.state ?? 'no record'} ${record?.reason ?? ''}`);
    }
    expect(orphans).toEqual([]);
    const failures = replies.filter((r) => r.reply.statusCode >= 400);
    const byStatus = Object.entries(
      failures.reduce<Record<string, number>>((acc, r) => {
        const key = `${r.what} ${r.reply.statusCode} ${(r.reply.body.error as { code: string }).code}`;
        acc[key] = (acc[key] ?? 0) + 1;
        return acc;
      }, {}),
    );
    console.info(
      JSON.stringify({
        requests: replies.length,
        accepted: accepted.length,
        batchJobs: env.aws.batchJobs.size,
        trainingJobs: env.aws.trainingJobs.size,
        injected: { aws: env.aws.injected, dynamo: env.dynamoInjected },
        failures: Object.fromEntries(byStatus),
        reconcile: report,
      }),
    );
  });
});
