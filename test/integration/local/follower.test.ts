/**
 * Local mode follows apps on AWS-backed schedulers without EventBridge: the follower describes the
 * non-terminal aws_batch apps (one DescribeJobs for the jobs it submitted) and applies what Batch says
 * through the reconciler's transition path. Batch is faked at the SDK wire (aws-sdk-client-mock); the
 * reconciler timer is off, so only the follower can move the app.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BatchClient,
  DescribeJobsCommand,
  ListJobsCommand,
  RegisterJobDefinitionCommand,
  SubmitJobCommand,
} from '@aws-sdk/client-batch';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalServer } from '../../../lib/local/server.js';
import { ACCOUNT, JOB_ARN, JOB_ID, nodeJob, parentJob } from '../../unit/aws-batch/helpers.js';

const batch = mockClient(BatchClient);
let server: LocalServer;
let dataDir: string;
const saved = { ...process.env };

beforeAll(async () => {
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
  process.env.AWS_REGION = 'us-east-1';
  process.env.AWS_ACCESS_KEY_ID = 'test';
  process.env.AWS_SECRET_ACCESS_KEY = 'test';
  let submittedName = '';
  batch.on(RegisterJobDefinitionCommand).callsFake((input: { jobDefinitionName: string }) => ({
    jobDefinitionName: input.jobDefinitionName,
    jobDefinitionArn: `arn:aws:batch:us-east-1:${ACCOUNT}:job-definition/${input.jobDefinitionName}:1`,
    revision: 1,
  }));
  batch.on(SubmitJobCommand).callsFake((input: { jobName: string }) => {
    submittedName = input.jobName;
    return { jobId: JOB_ID, jobName: input.jobName, jobArn: JOB_ARN };
  });
  // The job finished at once: SUCCEEDED at the first describe.
  batch.on(DescribeJobsCommand).callsFake((input: { jobs: string[] }) => ({
    jobs: input.jobs.map((id) =>
      id.includes('#')
        ? nodeJob(Number(id.slice(id.indexOf('#') + 1)), { jobName: submittedName, status: 'SUCCEEDED' })
        : parentJob({ jobName: submittedName, status: 'SUCCEEDED', stoppedAt: Date.now() }),
    ),
  }));
  batch.on(ListJobsCommand).resolves({ jobSummaryList: [] });
  dataDir = await mkdtemp(join(tmpdir(), 'txs-follower-'));
  const { startLocalServer } = await import('../../../lib/local/server.js');
  server = await startLocalServer({
    port: 0,
    dataDir,
    inMemory: true,
    schedulers: ['aws_batch'],
    reconcileEveryMs: 0,
    followEveryMs: 20,
  });
});

afterAll(async () => {
  await server?.close();
  batch.restore();
  process.env = saved;
  await rm(dataDir, { recursive: true, force: true });
});

async function api(path: string, init: RequestInit = {}): Promise<Record<string, unknown>> {
  const response = await fetch(`${server.url}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' },
  });
  const body = (await response.json()) as Record<string, unknown>;
  expect(response.status, JSON.stringify(body)).toBeLessThan(300);
  return body;
}

describe('local mode following aws_batch apps', () => {
  it('reports a job SUCCEEDED at its first describe, without the reconciler, from DescribeJobs of its job id', async () => {
    const run = await api('/v1/apps', {
      method: 'POST',
      body: JSON.stringify({
        scheduler: 'aws_batch',
        cfg: { queue: 'gpu' },
        component: 'utils.echo',
        args: ['--msg', 'hi'],
      }),
    });
    const path = `/v1/apps/aws_batch/${encodeURIComponent(String(run.appId))}`;
    let app = await api(path);
    // Follow by long poll until the app is terminal (each answer is a change, or the same record after 5 s).
    for (let i = 0; i < 10 && (app.status as { state: string }).state !== 'SUCCEEDED'; i++) {
      app = await api(`${path}?waitFor=${app.revision}&waitSeconds=5`);
    }
    expect((app.status as { state: string }).state).toBe('SUCCEEDED');
    const history = app.history as { to: string; source: string }[];
    expect(history.at(-1)).toMatchObject({ to: 'SUCCEEDED', source: 'describe' });
    // Described by the job id SubmitJob answered (one DescribeJobs for the follower's page of apps).
    const described = batch.commandCalls(DescribeJobsCommand).map((call) => call.args[0].input.jobs);
    expect(described).toContainEqual([JOB_ID]);
  });
});
