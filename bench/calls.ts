/**
 * AWS calls per operation: each verb runs once through its deployed handler (in-process) while SDK middleware
 * counts the DynamoDB commands the container's client sends and the fake data plane counts Batch, SageMaker
 * and CloudWatch Logs commands.
 */
import type { FunctionsEnvironment } from '../test/reliability/helpers/environment.js';
import { invoke } from '../test/reliability/helpers/lambda.js';
import { progress } from './lib/stats.js';

/** Calls of one operation. */
export interface CallsRow {
  operation: string;
  status: number;
  dynamodb: Record<string, number>;
  backend: Record<string, number>;
  /** Total AWS calls. */
  total: number;
  /** Calls to Batch, SageMaker or Logs. */
  schedulerCalls: number;
}

const BATCH = {
  scheduler: 'aws_batch',
  component: 'dist.ddp',
  args: ['-j', '2x8', '--script', 'train.py'],
  cfg: { queue: 'ml-gpu-queue' },
};
const SAGEMAKER = {
  scheduler: 'aws_sagemaker',
  component: 'dist.ddp',
  args: [
    '-j',
    '1x8',
    '--script',
    'train.py',
    '--image',
    '123456789012.dkr.ecr.us-east-1.amazonaws.com/torchx:0.8',
  ],
  cfg: {
    role: 'arn:aws:iam::123456789012:role/SageMakerExecution',
    output_path: 's3://ml-bucket/out/',
    instance_type: 'ml.p4d.24xlarge',
  },
};

export async function awsCallsPerOperation(env: FunctionsEnvironment): Promise<CallsRow[]> {
  progress('AWS calls per operation');
  const rows: CallsRow[] = [];
  const measure = async (operation: string, fn: () => Promise<number>) => {
    env.takeDynamoCalls();
    env.aws.takeCalls();
    const status = await fn();
    const dynamodb = env.takeDynamoCalls();
    const backend = env.aws.takeCalls();
    const sum = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);
    rows.push({
      operation,
      status,
      dynamodb,
      backend,
      total: sum(dynamodb) + sum(backend),
      schedulerCalls: sum(backend),
    });
  };
  /** A measured call whose result is the API's status code. */
  const answer =
    (...call: Parameters<typeof invoke>) =>
    async () =>
      (await invoke(...call)).statusCode;
  let batchApp = { scheduler: '', appId: '' };
  let sageMakerApp = { scheduler: '', appId: '' };
  await measure('run (aws_batch, dist.ddp 2x8)', async () => {
    const reply = await invoke(env.api.Run, { method: 'POST', resource: '/v1/apps', body: BATCH });
    batchApp = { scheduler: String(reply.body.scheduler), appId: String(reply.body.appId) };
    return reply.statusCode;
  });
  const keyedRun = answer(env.api.Run, {
    method: 'POST',
    resource: '/v1/apps',
    body: BATCH,
    headers: { 'Idempotency-Key': 'bench-1' },
  });
  await measure('run with Idempotency-Key (aws_batch)', keyedRun);
  await measure('run replayed (same Idempotency-Key)', keyedRun);
  // utils.echo's job definition embeds no job name: it is named by content hash and shared between runs.
  const echo = {
    scheduler: 'aws_batch',
    component: 'utils.echo',
    args: ['--msg', 'hi'],
    cfg: { queue: 'ml-gpu-queue' },
  };
  const runEcho = answer(env.api.Run, { method: 'POST', resource: '/v1/apps', body: echo });
  await measure('run (aws_batch, utils.echo: shared definition, first use)', runEcho);
  await measure('run (aws_batch, utils.echo again: definition exists)', runEcho);
  await measure('run (aws_sagemaker, dist.ddp 1x8)', async () => {
    const reply = await invoke(env.api.Run, { method: 'POST', resource: '/v1/apps', body: SAGEMAKER });
    sageMakerApp = { scheduler: String(reply.body.scheduler), appId: String(reply.body.appId) };
    return reply.statusCode;
  });
  await measure('dryrun', answer(env.api.Dryrun, { method: 'POST', resource: '/v1/dryrun', body: BATCH }));
  const resource = '/v1/apps/{scheduler}/{appId}';
  await measure('status', answer(env.api.Status, { method: 'GET', resource, pathParameters: batchApp }));
  const jobName = batchApp.appId.split(':')[1] ?? '';
  env.aws.setBatchStatus(jobName, 'RUNNING');
  const refreshed = (app: typeof batchApp) =>
    answer(env.api.Status, { method: 'GET', resource, pathParameters: app, query: { refresh: 'true' } });
  await measure('status?refresh=true (aws_batch, state changed)', refreshed(batchApp));
  await measure('status?refresh=true (aws_sagemaker, unchanged)', refreshed(sageMakerApp));
  await measure('list (first page)', answer(env.api.List, { method: 'GET', resource: '/v1/apps' }));
  await measure(
    'logs (aws_batch, one page)',
    answer(env.api.Logs, {
      method: 'GET',
      resource: `${resource}/logs`,
      pathParameters: batchApp,
      query: {},
    }),
  );
  await measure(
    'cancel (aws_batch)',
    answer(env.api.Cancel, {
      method: 'POST',
      resource: `${resource}/cancel`,
      pathParameters: batchApp,
    }),
  );
  // The job's SUCCEEDED event; sent twice, the second is a duplicate the record already holds.
  const succeeded = () =>
    env.handleStateChange({
      source: 'aws.batch',
      'detail-type': 'Batch Job State Change',
      detail: {
        jobName,
        jobId: 'x',
        jobQueue: 'arn:aws:batch:us-east-1:123456789012:job-queue/ml-gpu-queue',
        status: 'SUCCEEDED',
        attempts: [{}],
        createdAt: Date.now(),
        startedAt: Date.now(),
        stoppedAt: Date.now(),
      },
    });
  await measure('state-change event (applied)', async () => ((await succeeded()).applied ? 200 : 409));
  await measure('state-change event (duplicate)', async () => ((await succeeded()).applied ? 409 : 200));
  let checked = 0;
  await measure('reconcile pass', async () => {
    const report = await env.reconcileAll();
    checked = Object.values(report).reduce((n, r) => n + r.checked, 0);
    return 200;
  });
  const last = rows[rows.length - 1];
  if (last) last.operation = `reconcile pass (${checked} active apps)`;
  return rows;
}
