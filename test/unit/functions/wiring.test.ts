/**
 * What each function builds on its first request: the container, the Planner and the Runner create only the
 * SDK clients their route needs (the figures of docs/performance.md rest on it), and a scheduler module
 * loaded on demand changes nothing a caller sees.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BatchClient, DescribeJobsCommand, ListJobsCommand } from '@aws-sdk/client-batch';
import {
  CloudWatchLogsClient,
  DescribeLogStreamsCommand,
  GetLogEventsCommand,
} from '@aws-sdk/client-cloudwatch-logs';
import { DescribeTrainingJobCommand, SageMakerClient } from '@aws-sdk/client-sagemaker';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { KNOWN_SCHEDULERS } from '../../../functions/shared/config.js';
import { ENV } from '../../../functions/shared/env-names.js';
import { parseRunRequest } from '../../../lib/specs/index.js';
import { JOB_ID, nodeJob, parentJob } from '../aws-batch/helpers.js';
import { describedJob } from '../aws-sagemaker/helpers.js';

let created: string[];

beforeEach(async () => {
  vi.resetModules();
  vi.stubEnv(ENV.tableName, 'apps');
  vi.stubEnv(ENV.schedulers, 'aws_batch,aws_sagemaker');
  vi.stubEnv(ENV.batchQueues, 'gpu');
  vi.stubEnv('AWS_REGION', 'us-east-1');
  created = [];
  const container = await import('../../../functions/shared/container.js');
  container.configureClients((client) => {
    created.push(client.constructor.name);
  });
});

afterEach(() => {
  vi.unstubAllEnvs();
  vi.resetModules();
});

const DRYRUN = parseRunRequest({
  scheduler: 'aws_batch',
  component: 'dist.ddp',
  args: ['-j', '2x8', '--script', 'train.py'],
  cfg: { queue: 'gpu' },
});

describe('the Planner (dry-run and scheduler-listing functions)', () => {
  it('dry-runs and describes every enabled scheduler without creating any SDK client', async () => {
    const { planner } = await import('../../../functions/schedulers/table.js');
    const plans = await planner();
    expect(plans.describeSchedulers().map((s) => s.name)).toEqual(['aws_batch', 'aws_sagemaker']);
    expect(plans.dryrunRequest(DRYRUN, 'alice').request).toHaveProperty('submitJob');
    expect(created).toEqual([]);
  });

  it('describes every enabled scheduler from the translating registry the Planner shares, creating no client', async () => {
    const table = await import('../../../functions/schedulers/table.js');
    const described = await table.describeSchedulers();
    expect(described.map((s) => s.name)).toEqual(['aws_batch', 'aws_sagemaker']);
    expect(described[0]?.runOpts.map((o) => o.name)).toContain('queue');
    expect(described[1]?.capabilities).toMatchObject({ cancel: true, describe: 'partial' });
    expect(described).toEqual((await table.planner()).describeSchedulers());
    expect(created).toEqual([]);
  });

  it('refuses a scheduler that is not enabled, naming the enabled ones', async () => {
    const { planner } = await import('../../../functions/schedulers/table.js');
    const plans = await planner('slurm');
    expect(() => plans.dryrunRequest({ ...DRYRUN, scheduler: 'slurm' }, 'alice')).toThrow(
      expect.objectContaining({ name: 'UnknownSchedulerError' }),
    );
    expect(() => plans.cfgWarnings('slurm', {})).toThrow(/aws_batch, aws_sagemaker/);
  });
});

describe('the scheduler table', () => {
  it('builds every known scheduler from its module, under its own name, for the Planner and the Runner', async () => {
    vi.stubEnv(ENV.schedulers, KNOWN_SCHEDULERS.join(','));
    const dataDir = mkdtempSync(path.join(tmpdir(), 'txs-wiring-data-'));
    vi.stubEnv(ENV.localDataDir, dataDir);
    const { closeRunner, planner, runner } = await import('../../../functions/schedulers/table.js');
    const plans = await planner();
    const runs = await runner();
    try {
      for (const name of KNOWN_SCHEDULERS) {
        expect(plans.scheduler(name).backend).toBe(name);
        expect(runs.scheduler(name).backend).toBe(name);
      }
    } finally {
      await closeRunner();
      rmSync(dataDir, { recursive: true, force: true });
    }
    // The Planner's AWS schedulers only translate; the Runner's submit.
    expect(plans.scheduler('aws_batch').constructor.name).toBe('AwsBatchTranslator');
    expect(runs.scheduler('aws_batch').constructor.name).toBe('AwsBatchScheduler');
    expect(created.sort()).toEqual(['BatchClient', 'DynamoDBClient', 'SageMakerClient']);
  });
});

describe('the record functions (list, status, state change)', () => {
  it('create the DynamoDB client only', async () => {
    const { appRecords } = await import('../../../functions/shared/container.js');
    appRecords();
    expect(created).toEqual(['DynamoDBClient']);
  });
});

describe('the Runner (run, refresh, cancel, delete, logs)', () => {
  it('loads the scheduler a request names: an aws_batch request creates no SageMaker client', async () => {
    const { runner } = await import('../../../functions/schedulers/table.js');
    const runs = await runner('aws_batch');
    runs.scheduler('aws_batch');
    expect(created.sort()).toEqual(['BatchClient', 'DynamoDBClient']);
    expect(runs.schedulerBackends()).toEqual(['aws_batch', 'aws_sagemaker']);
  });

  it('loads every enabled scheduler when none is named (the reconciler), creating no Logs client', async () => {
    const { runner } = await import('../../../functions/schedulers/table.js');
    const runs = await runner();
    for (const name of runs.schedulerBackends()) runs.scheduler(name);
    expect(created.sort()).toEqual(['BatchClient', 'DynamoDBClient', 'SageMakerClient']);
  });

  it('creates the Logs client when a log is first read, one for both AWS schedulers', async () => {
    const batch = mockClient(BatchClient);
    const sageMaker = mockClient(SageMakerClient);
    const logs = mockClient(CloudWatchLogsClient);
    try {
      batch
        .on(ListJobsCommand)
        .resolves({ jobSummaryList: [{ jobId: JOB_ID, jobName: parentJob().jobName }] });
      batch.on(DescribeJobsCommand).callsFake((input: { jobs: string[] }) => ({
        jobs: [parentJob(), nodeJob(0)].filter((job) => input.jobs.includes(job.jobId ?? '')),
      }));
      sageMaker.on(DescribeTrainingJobCommand).resolves(describedJob());
      logs.on(DescribeLogStreamsCommand).resolves({ logStreams: [] });
      logs.on(GetLogEventsCommand).resolves({ events: [], nextForwardToken: 'f/0' });
      const { runner } = await import('../../../functions/schedulers/table.js');
      const runs = await runner();
      await runs.scheduler('aws_batch').readLogs('gpu:train-t4rcs9x6sv1m', { role: 'ps', replica: 0 });
      await runs.scheduler('aws_sagemaker').readLogs('train-t4rcs9x6sv1m', { role: 'trainer' });
      expect(created.filter((name) => name === 'CloudWatchLogsClient')).toHaveLength(1);
      expect(
        new Set(logs.commandCalls(GetLogEventsCommand).map((call) => call.args[0].input.logStreamName)),
      ).toEqual(new Set(['train-t4rcs9x6sv1m/default/task0']));
      expect(logs.commandCalls(DescribeLogStreamsCommand)).toHaveLength(1);
    } finally {
      batch.restore();
      sageMaker.restore();
      logs.restore();
    }
  });
});
