/**
 * Jobs in a workspace over the real AWS wire: the schedulers' own SDK clients send the requests to moto and
 * describe the jobs back. aws_batch: the `ecsProperties` node ranges (fetch container, then main container);
 * moto stores a multi-node definition's node ranges as sent and validates none of their contents, so this
 * checks the SDK's serialization of the shape and the describe path, not Batch's acceptance of it (see
 * docs/workspaces.md for what only AWS can confirm). aws_sagemaker: the workspace input channel and the
 * wrapped entrypoint.
 */
import { BatchClient, DescribeJobsCommand, ListJobsCommand } from '@aws-sdk/client-batch';
import { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import { DescribeTrainingJobCommand, SageMakerClient } from '@aws-sdk/client-sagemaker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAwsBatchScheduler } from '../../lib/schedulers/aws-batch/index.js';
import { createAwsSageMakerScheduler } from '../../lib/schedulers/aws-sagemaker/index.js';
import { makeAppDef, makeResource, makeRole } from '../../lib/specs/index.js';
import { MOTO_QUEUE, MOTO_SAGEMAKER_ROLE } from './constants.js';
import { pointSdkAtMoto } from './helpers.js';

const SHA = '3f2a9c0d11be4e5f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f';

const workspace = { sha256: SHA, size: 10, fileCount: 1, archive: `s3://txs-ws/alice/${SHA}.tar.gz` };

let batch: BatchClient;
let sageMaker: SageMakerClient;
let logs: CloudWatchLogsClient;

beforeAll(() => {
  const config = pointSdkAtMoto();
  batch = new BatchClient(config);
  sageMaker = new SageMakerClient(config);
  logs = new CloudWatchLogsClient(config);
});
afterAll(() => {
  batch?.destroy();
  sageMaker?.destroy();
  logs?.destroy();
});

describe('aws_batch workspace job on moto', () => {
  it('registers the ecsProperties node ranges as sent, submits the job and describes its roles back', async () => {
    const scheduler = createAwsBatchScheduler(
      { sessionName: 'torchx' },
      { batchClient: batch, logsClient: logs, defaultUser: 'alice', queues: [MOTO_QUEUE] },
    );
    const app = makeAppDef({
      name: 'wsjob',
      roles: [
        makeRole({
          name: 'trainer',
          image: 'alpine:3',
          entrypoint: 'python',
          args: ['train.py', '--lr', '0.1'],
          numReplicas: 2,
          resource: makeResource({ cpu: 1, gpu: 0, memMB: 512 }),
        }),
      ],
    });
    const cfg = scheduler.runOpts().resolve({
      queue: MOTO_QUEUE,
      job_role_arn: 'arn:aws:iam::123456789012:role/txs-job',
    });
    const dryrun = scheduler.validatedDryrun(app, cfg, workspace);
    const appId = await scheduler.schedule(dryrun);

    // moto's DescribeJobDefinitions leaves nodeProperties out; its DescribeJobs returns them.
    const jobName = dryrun.request.submitJob.jobName ?? '';
    const { jobSummaryList } = await batch.send(
      new ListJobsCommand({ jobQueue: MOTO_QUEUE, filters: [{ name: 'JOB_NAME', values: [jobName] }] }),
    );
    const { jobs } = await batch.send(new DescribeJobsCommand({ jobs: [jobSummaryList?.[0]?.jobId ?? ''] }));
    expect(jobs?.[0]?.nodeProperties).toEqual(dryrun.request.registerJobDefinition.nodeProperties);

    const described = await scheduler.describe(appId);
    expect(described?.roles.map((role) => [role.name, role.entrypoint, role.args, role.numReplicas])).toEqual(
      [['trainer', 'python', ['train.py', '--lr', '0.1'], 2]],
    );
  });
});

describe('aws_sagemaker workspace job on moto', () => {
  it('creates the training job with the workspace channel and wrapped entrypoint, and describes the role back', async () => {
    const scheduler = createAwsSageMakerScheduler(
      { sessionName: 'torchx' },
      { sageMakerClient: sageMaker, logsClient: logs, defaultUser: 'alice' },
    );
    const app = makeAppDef({
      name: 'wsjob',
      roles: [
        makeRole({
          name: 'trainer',
          image: '123456789012.dkr.ecr.us-east-1.amazonaws.com/torchx:0.7.0',
          entrypoint: 'python',
          args: ['train.py', '--lr', '0.1'],
          resource: makeResource({ cpu: 1, gpu: 0, memMB: 512 }),
        }),
      ],
    });
    const cfg = scheduler.runOpts().resolve({
      role: MOTO_SAGEMAKER_ROLE,
      output_path: 's3://txs-moto/output/',
      instance_type: 'ml.m5.large',
    });
    const dryrun = scheduler.validatedDryrun(app, cfg, workspace);
    const appId = await scheduler.schedule(dryrun);
    const job = await sageMaker.send(new DescribeTrainingJobCommand({ TrainingJobName: appId }));
    expect(job.InputDataConfig).toEqual(dryrun.request.createTrainingJob.InputDataConfig);
    expect(job.AlgorithmSpecification?.ContainerEntrypoint).toEqual(
      dryrun.request.createTrainingJob.AlgorithmSpecification?.ContainerEntrypoint,
    );
    const described = await scheduler.describe(appId);
    expect(described?.roles.map((role) => [role.entrypoint, role.args])).toEqual([
      ['python', ['train.py', '--lr', '0.1']],
    ]);
  });
});
