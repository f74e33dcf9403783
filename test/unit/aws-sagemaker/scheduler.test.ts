import {
  CreateTrainingJobCommand,
  DescribeTrainingJobCommand,
  ListTagsCommand,
  ListTrainingJobsCommand,
  ResourceInUse,
  ResourceLimitExceeded,
  ResourceNotFound,
  SageMakerClient,
  StopTrainingJobCommand,
} from '@aws-sdk/client-sagemaker';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import 'aws-sdk-client-mock-vitest/extend';
import {
  AWS_SAGEMAKER,
  type AwsSageMakerScheduler,
  createAwsSageMakerScheduler,
  defaultSageMakerClient,
} from '../../../lib/schedulers/aws-sagemaker/index.js';
import {
  BackendAccessDeniedError,
  BackendConflictError,
  BackendError,
  BackendQuotaExceededError,
  BackendValidationError,
} from '../../../lib/schedulers/index.js';
import { makeAppDef, makeRole, namedResource } from '../../../lib/specs/index.js';
import {
  accessDenied,
  BASE_CFG,
  describedJob,
  IMAGE,
  makeScheduler,
  ROLE_ARN,
  sageMakerError,
  throttled,
} from './helpers.js';

const client = new SageMakerClient({});
const sageMaker = mockClient(client);
let scheduler: AwsSageMakerScheduler;

const NOW = Date.parse('2025-01-31T00:00:00.000Z');

function app() {
  return makeAppDef({
    name: 'train',
    roles: [
      makeRole({
        name: 'trainer',
        image: IMAGE,
        entrypoint: 'python',
        args: ['-m', 'train'],
        numReplicas: 2,
        resource: namedResource('aws_p4d.24xlarge'),
      }),
    ],
  });
}

beforeEach(() => {
  sageMaker.reset();
  scheduler = makeScheduler({ sageMakerClient: client, now: NOW });
});

describe('AwsSageMakerScheduler', () => {
  describe('identity', () => {
    it('is registered as aws_sagemaker with its capabilities', () => {
      expect(scheduler.backend).toBe(AWS_SAGEMAKER);
      expect(scheduler.capabilities()).toStrictEqual({
        cancel: true,
        logs: true,
        describe: 'partial',
        distributed: true,
        mounts: false,
        retries: true,
        elasticity: false,
      });
    });

    it('declares role and output_path as required and documents the defaults', () => {
      const opts = Object.fromEntries(
        scheduler
          .runOpts()
          .describe()
          .map((o) => [o.name, o]),
      );
      expect(opts.role?.required).toBe(true);
      expect(opts.output_path?.required).toBe(true);
      expect(opts.instance_type?.required).toBe(false);
      expect(opts.volume_size?.default).toBe(30);
      expect(opts.max_run?.default).toBe(86400);
      expect(opts.input_mode?.default).toBe('File');
      expect(opts.model_channel_name?.default).toBe('model');
      expect(opts.user?.default).toBe('alice');
      expect(opts.source_dir).toBeUndefined();
    });

    it('builds its default clients once', () => {
      const a = createAwsSageMakerScheduler({ sessionName: 'a' });
      const b = createAwsSageMakerScheduler({ sessionName: 'b' });
      expect(defaultSageMakerClient()).toBe(defaultSageMakerClient());
      expect(a).not.toBe(b);
    });

    it('uses the training job name as app id and native name', () => {
      const info = scheduler.submitDryrun(app(), BASE_CFG);
      expect(scheduler.appIdOf(info)).toBe('train-t4rcs9x6sv1m');
      expect(scheduler.nativeNameOf('train-t4rcs9x6sv1m')).toBe('train-t4rcs9x6sv1m');
      expect(info.toJSON().request).toStrictEqual({ createTrainingJob: info.request.createTrainingJob });
      expect(JSON.parse(info.format())).toStrictEqual(JSON.parse(JSON.stringify(info.request)));
    });
  });

  describe('schedule', () => {
    it('sends the dry run request unchanged and returns the job name', async () => {
      sageMaker
        .on(CreateTrainingJobCommand)
        .resolves({ TrainingJobArn: 'arn:aws:sagemaker:us-east-1:1:training-job/x' });
      const info = scheduler.submitDryrun(app(), BASE_CFG);
      await expect(scheduler.schedule(info)).resolves.toBe('train-t4rcs9x6sv1m');
      const calls = sageMaker.commandCalls(CreateTrainingJobCommand);
      expect(calls).toHaveLength(1);
      expect(calls[0]?.args[0].input).toStrictEqual(info.request.createTrainingJob);
    });

    it('retries a throttled call (first call throttled, second succeeds)', async () => {
      sageMaker.on(CreateTrainingJobCommand).rejectsOnce(throttled()).resolves({ TrainingJobArn: 'arn' });
      await expect(scheduler.submit(app(), BASE_CFG)).resolves.toBe('train-t4rcs9x6sv1m');
      expect(sageMaker).toHaveReceivedCommandTimes(CreateTrainingJobCommand, 2);
    });

    it('reports throttling that outlasts the retries as a retryable BackendError', async () => {
      sageMaker.on(CreateTrainingJobCommand).rejects(throttled());
      const error = await scheduler.submit(app(), BASE_CFG).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(BackendError);
      expect((error as BackendError).retryable).toBe(true);
      expect((error as Error).message).toMatch(/sagemaker:CreateTrainingJob.*throttled/);
      expect(sageMaker).toHaveReceivedCommandTimes(CreateTrainingJobCommand, 4);
    });

    it('names the IAM action when access is denied', async () => {
      sageMaker.on(CreateTrainingJobCommand).rejects(accessDenied('sagemaker:CreateTrainingJob'));
      const error = await scheduler.submit(app(), BASE_CFG).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(BackendAccessDeniedError);
      expect((error as Error).message).toMatch(
        /^Access denied to sagemaker:CreateTrainingJob for training job train-/,
      );
      expect((error as Error).message).toMatch(/iam:PassRole/);
      expect(sageMaker).toHaveReceivedCommandTimes(CreateTrainingJobCommand, 1);
    });

    it('reports a name already in use by another job as a BackendConflictError', async () => {
      sageMaker
        .on(CreateTrainingJobCommand)
        .rejects(new ResourceInUse({ message: 'Training job names must be unique', $metadata: {} }))
        .on(DescribeTrainingJobCommand)
        .resolves(describedJob({ Environment: { OTHER: '1' } }));
      await expect(scheduler.submit(app(), BASE_CFG)).rejects.toThrow(BackendConflictError);
    });

    it('treats a name in use by this very request (a lost answer) as scheduled', async () => {
      const info = scheduler.submitDryrun(app(), BASE_CFG);
      sageMaker
        .on(CreateTrainingJobCommand)
        .rejects(new ResourceInUse({ message: 'Training job names must be unique', $metadata: {} }))
        .on(DescribeTrainingJobCommand)
        .resolves(describedJob({ Environment: { ...info.request.createTrainingJob.Environment } }));
      await expect(scheduler.schedule(info)).resolves.toBe('train-t4rcs9x6sv1m');
    });

    it('explains a reached quota with where to raise it', async () => {
      sageMaker.on(CreateTrainingJobCommand).rejects(
        new ResourceLimitExceeded({
          message: 'The account-level service limit ml.p4d.24xlarge for training job usage is 0 Instances',
          $metadata: {},
        }),
      );
      const error = await scheduler.submit(app(), BASE_CFG).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(BackendQuotaExceededError);
      expect((error as Error).message).toMatch(/ml\.p4d\.24xlarge for training job usage.*Service Quotas/);
    });

    it("passes SageMaker's own validation message on", async () => {
      sageMaker
        .on(CreateTrainingJobCommand)
        .rejects(
          sageMakerError(
            'ValidationException',
            'Could not assume role arn:aws:iam::123456789012:role/SageMakerExecution',
          ),
        );
      const error = await scheduler.submit(app(), BASE_CFG).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(BackendValidationError);
      expect((error as Error).message).toMatch(
        /SageMaker rejected sagemaker:CreateTrainingJob.*Could not assume role/,
      );
    });

    it('reports a server fault as a retryable BackendError', async () => {
      sageMaker.on(CreateTrainingJobCommand).rejects(sageMakerError('InternalFailure', 'oops', 500));
      const error = await scheduler.submit(app(), BASE_CFG).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(BackendError);
      expect((error as BackendError).retryable).toBe(true);
    });
  });

  describe('describe', () => {
    it('maps a training job to a DescribeAppResponse with roles and replica statuses', async () => {
      sageMaker
        .on(DescribeTrainingJobCommand, { TrainingJobName: 'train-t4rcs9x6sv1m' })
        .resolves(describedJob());
      const environment = {
        TORCHX_JOB_ID: 'aws_sagemaker://torchx/train-t4rcs9x6sv1m',
        TORCHX_ROLE_IDX: '0',
        TORCHX_ROLE_NAME: 'trainer',
        TORCHX_RANK0_HOST: 'algo-1',
      };
      await expect(scheduler.describe('train-t4rcs9x6sv1m')).resolves.toStrictEqual({
        appId: 'train-t4rcs9x6sv1m',
        state: 'RUNNING',
        numRestarts: 0,
        msg: 'Training: Training image download completed. Training in progress.',
        structuredErrorMsg: '<NONE>',
        stateReason: {
          text: 'Training image download completed. Training in progress.',
          code: 'Training',
          since: '2025-01-01T10:00:00.000Z',
          source: 'aws_sagemaker',
        },
        uiUrl:
          'https://us-east-1.console.aws.amazon.com/sagemaker/home?region=us-east-1#jobs/train-t4rcs9x6sv1m',
        metadata: {
          trainingJobArn: 'arn:aws:sagemaker:us-east-1:123456789012:training-job/train-t4rcs9x6sv1m',
          trainingJobStatus: 'InProgress',
          secondaryStatus: 'Training',
        },
        rolesStatuses: [
          {
            role: 'trainer',
            replicas: [
              { id: 0, state: 'RUNNING', role: 'trainer', hostname: 'algo-1', structuredErrorMsg: '<NONE>' },
              { id: 1, state: 'RUNNING', role: 'trainer', hostname: 'algo-2', structuredErrorMsg: '<NONE>' },
            ],
          },
        ],
        roles: [
          {
            name: 'trainer',
            image: IMAGE,
            entrypoint: 'bash',
            args: ['-c', 'torchrun train.py'],
            env: environment,
            numReplicas: 2,
            maxRetries: 2,
            retryPolicy: 'APPLICATION',
            resource: {
              cpu: 96,
              gpu: 8,
              memMB: 1132416,
              capabilities: { 'node.kubernetes.io/instance-type': 'p4d.24xlarge' },
              devices: { 'vpc.amazonaws.com/efa': 4 },
            },
            portMap: {},
            metadata: {},
            mounts: [],
          },
        ],
        updatedAt: Date.parse('2025-01-01T10:00:00.000Z'),
      });
    });

    it('reports PENDING while SageMaker waits for capacity (TorchX said RUNNING)', async () => {
      sageMaker.on(DescribeTrainingJobCommand).resolves(
        describedJob({
          SecondaryStatus: 'Pending',
          SecondaryStatusTransitions: [
            { Status: 'Starting', StartTime: new Date(NOW) },
            { Status: 'Pending', StartTime: new Date(NOW), StatusMessage: 'Insufficient capacity' },
          ],
        }),
      );
      const desc = await scheduler.describe('train-t4rcs9x6sv1m');
      expect(desc?.state).toBe('PENDING');
      expect(desc?.msg).toBe('Pending: Insufficient capacity');
    });

    it('reports FAILED with the FailureReason, and a job stopped at max_run as FAILED', async () => {
      sageMaker
        .on(DescribeTrainingJobCommand)
        .resolvesOnce(
          describedJob({
            TrainingJobStatus: 'Failed',
            SecondaryStatus: 'Failed',
            FailureReason: 'AlgorithmError: exit code 1',
          }),
        )
        .resolvesOnce(describedJob({ TrainingJobStatus: 'Stopped', SecondaryStatus: 'MaxRuntimeExceeded' }));
      const failed = await scheduler.describe('train-t4rcs9x6sv1m');
      expect([failed?.state, failed?.msg]).toStrictEqual(['FAILED', 'AlgorithmError: exit code 1']);
      const exceeded = await scheduler.describe('train-t4rcs9x6sv1m');
      expect([exceeded?.state, exceeded?.msg]).toStrictEqual(['FAILED', 'MaxRuntimeExceeded']);
    });

    it('rebuilds a foreign job (no torchx environment, unknown instance type) as role "node"', async () => {
      sageMaker.on(DescribeTrainingJobCommand).resolves(
        describedJob({
          Environment: undefined,
          RetryStrategy: undefined,
          ResourceConfig: { InstanceType: 'ml.c7i.large', InstanceCount: 1, VolumeSizeInGB: 30 },
          AlgorithmSpecification: { TrainingImage: IMAGE, TrainingInputMode: 'File' },
        }),
      );
      const desc = await scheduler.describe('train-t4rcs9x6sv1m');
      expect(desc?.roles[0]).toMatchObject({
        name: 'node',
        entrypoint: '<MISSING>',
        args: [],
        env: {},
        numReplicas: 1,
        maxRetries: 0,
        resource: {
          cpu: -1,
          gpu: -1,
          memMB: -1,
          capabilities: { 'node.kubernetes.io/instance-type': 'c7i.large' },
        },
      });
      expect(desc?.rolesStatuses[0]?.role).toBe('node');
    });

    it.each([
      ['ResourceNotFound', new ResourceNotFound({ message: 'Training job not found', $metadata: {} })],
      ['ValidationException', sageMakerError('ValidationException', 'Requested resource not found.')],
    ])('returns undefined for an unknown job (%s), where TorchX raised', async (_name, error) => {
      sageMaker.on(DescribeTrainingJobCommand).rejects(error);
      await expect(scheduler.describe('nope-b')).resolves.toBeUndefined();
      await expect(scheduler.exists('nope-b')).resolves.toBe(false);
    });

    it('retries a throttled describe', async () => {
      sageMaker.on(DescribeTrainingJobCommand).rejectsOnce(throttled()).resolves(describedJob());
      expect((await scheduler.describe('train-t4rcs9x6sv1m'))?.state).toBe('RUNNING');
      expect(sageMaker).toHaveReceivedCommandTimes(DescribeTrainingJobCommand, 2);
    });

    it('names sagemaker:DescribeTrainingJob when access is denied', async () => {
      sageMaker.on(DescribeTrainingJobCommand).rejects(accessDenied('sagemaker:DescribeTrainingJob'));
      await expect(scheduler.describe('train-t4rcs9x6sv1m')).rejects.toThrow(
        /^Access denied to sagemaker:DescribeTrainingJob for training job train-t4rcs9x6sv1m/,
      );
    });
  });

  describe('list', () => {
    const summary = (name: string, status = 'InProgress', secondary = 'Training') => ({
      TrainingJobName: name,
      TrainingJobArn: `arn:aws:sagemaker:us-east-1:123456789012:training-job/${name}`,
      CreationTime: new Date(NOW - 3600_000),
      TrainingJobStatus: status as 'InProgress',
      SecondaryStatus: secondary as 'Training',
    });

    it('pages through recent jobs, newest first, and keeps those tagged by torchx', async () => {
      sageMaker
        .on(ListTrainingJobsCommand)
        .resolvesOnce({
          TrainingJobSummaries: [
            summary('train-t4rcs9x6sv1m'),
            summary('pytorch-training-2025-01-30-10-00-00-123'),
            summary('foreign-bcd'),
          ],
          NextToken: 'page-2',
        })
        .resolvesOnce({ TrainingJobSummaries: [summary('echo-c', 'Completed', 'Completed')] });
      sageMaker
        .on(ListTagsCommand, {
          ResourceArn: 'arn:aws:sagemaker:us-east-1:123456789012:training-job/train-t4rcs9x6sv1m',
        })
        .resolves({
          Tags: [
            { Key: 'torchx.pytorch.org/version', Value: '0.1.0' },
            { Key: 'torchx.pytorch.org/app-name', Value: 'train' },
          ],
        })
        .on(ListTagsCommand, {
          ResourceArn: 'arn:aws:sagemaker:us-east-1:123456789012:training-job/foreign-bcd',
        })
        .resolves({ Tags: [{ Key: 'team', Value: 'x' }] })
        .on(ListTagsCommand, { ResourceArn: 'arn:aws:sagemaker:us-east-1:123456789012:training-job/echo-c' })
        .resolves({ Tags: [{ Key: 'torchx.pytorch.org/version', Value: '0.1.0' }] });

      await expect(scheduler.list()).resolves.toStrictEqual([
        { appId: 'train-t4rcs9x6sv1m', state: 'RUNNING', appHandle: '<NOT_SET>', name: 'train' },
        { appId: 'echo-c', state: 'SUCCEEDED', appHandle: '<NOT_SET>', name: 'echo-c' },
      ]);
      expect(sageMaker).toHaveReceivedNthCommandWith(ListTrainingJobsCommand, 1, {
        MaxResults: 100,
        SortBy: 'CreationTime',
        SortOrder: 'Descending',
        CreationTimeAfter: new Date(NOW - 30 * 24 * 3600 * 1000),
      });
      expect(sageMaker).toHaveReceivedNthCommandWith(ListTrainingJobsCommand, 2, { NextToken: 'page-2' });
      expect(
        sageMaker.commandCalls(ListTrainingJobsCommand).every((c) => !('StatusEquals' in c.args[0].input)),
      ).toBe(true);
      // The SDK-style name ending in a timestamp is never asked about.
      expect(sageMaker).toHaveReceivedCommandTimes(ListTagsCommand, 3);
    });

    it('asks for the tags of each job only once per scheduler', async () => {
      sageMaker.on(ListTrainingJobsCommand).resolves({ TrainingJobSummaries: [summary('train-b')] });
      sageMaker
        .on(ListTagsCommand)
        .resolves({ Tags: [{ Key: 'torchx.pytorch.org/version', Value: '0.1.0' }] });
      await scheduler.list();
      await scheduler.list();
      expect(sageMaker).toHaveReceivedCommandTimes(ListTrainingJobsCommand, 2);
      expect(sageMaker).toHaveReceivedCommandTimes(ListTagsCommand, 1);
    });

    it('skips a job deleted between listing and tagging', async () => {
      sageMaker.on(ListTrainingJobsCommand).resolves({ TrainingJobSummaries: [summary('gone-b')] });
      sageMaker.on(ListTagsCommand).rejects(new ResourceNotFound({ message: 'not found', $metadata: {} }));
      await expect(scheduler.list()).resolves.toStrictEqual([]);
    });

    it('names sagemaker:ListTrainingJobs when access is denied', async () => {
      sageMaker.on(ListTrainingJobsCommand).rejects(accessDenied('sagemaker:ListTrainingJobs'));
      await expect(scheduler.list()).rejects.toThrow(/Access denied to sagemaker:ListTrainingJobs/);
    });

    it('retries a throttled page', async () => {
      sageMaker.on(ListTrainingJobsCommand).rejectsOnce(throttled()).resolves({ TrainingJobSummaries: [] });
      await expect(scheduler.list()).resolves.toStrictEqual([]);
      expect(sageMaker).toHaveReceivedCommandTimes(ListTrainingJobsCommand, 2);
    });
  });

  describe('cancel and delete', () => {
    it('stops a running job', async () => {
      sageMaker.on(DescribeTrainingJobCommand).resolves(describedJob());
      sageMaker.on(StopTrainingJobCommand).resolves({});
      await scheduler.cancel('train-t4rcs9x6sv1m');
      expect(sageMaker).toHaveReceivedCommandExactlyOnceWith(StopTrainingJobCommand, {
        TrainingJobName: 'train-t4rcs9x6sv1m',
      });
    });

    it('does nothing for a finished or unknown job', async () => {
      sageMaker
        .on(DescribeTrainingJobCommand, { TrainingJobName: 'done-b' })
        .resolves(describedJob({ TrainingJobStatus: 'Completed', SecondaryStatus: 'Completed' }))
        .on(DescribeTrainingJobCommand, { TrainingJobName: 'nope-b' })
        .rejects(sageMakerError('ValidationException', 'Requested resource not found.'));
      await scheduler.cancel('done-b');
      await scheduler.cancel('nope-b');
      await scheduler.delete('nope-b');
      expect(sageMaker).not.toHaveReceivedCommand(StopTrainingJobCommand);
    });

    it('is idempotent while the job is already stopping', async () => {
      sageMaker.on(DescribeTrainingJobCommand).resolves(
        describedJob({
          TrainingJobStatus: 'Stopping',
          SecondaryStatus: 'Stopping',
          SecondaryStatusTransitions: [
            { Status: 'Starting', StartTime: new Date(NOW) },
            { Status: 'Training', StartTime: new Date(NOW) },
            { Status: 'Stopping', StartTime: new Date(NOW) },
          ],
        }),
      );
      sageMaker
        .on(StopTrainingJobCommand)
        .rejects(
          sageMakerError(
            'ValidationException',
            'The training job is in status Stopping and cannot be stopped',
          ),
        );
      await expect(scheduler.cancel('train-t4rcs9x6sv1m')).resolves.toBeUndefined();
    });

    it('retries a throttled stop and reports a denied one', async () => {
      sageMaker.on(DescribeTrainingJobCommand).resolves(describedJob());
      sageMaker.on(StopTrainingJobCommand).rejectsOnce(throttled()).resolves({});
      await scheduler.cancel('train-t4rcs9x6sv1m');
      expect(sageMaker).toHaveReceivedCommandTimes(StopTrainingJobCommand, 2);

      sageMaker.on(StopTrainingJobCommand).rejects(accessDenied('sagemaker:StopTrainingJob'));
      await expect(scheduler.cancel('train-t4rcs9x6sv1m')).rejects.toThrow(
        /Access denied to sagemaker:StopTrainingJob/,
      );
    });

    it('deletes by stopping the job: SageMaker keeps no definition to remove', async () => {
      sageMaker.on(DescribeTrainingJobCommand).resolves(describedJob());
      sageMaker.on(StopTrainingJobCommand).resolves({});
      await scheduler.delete('train-t4rcs9x6sv1m');
      expect(sageMaker).toHaveReceivedCommandTimes(StopTrainingJobCommand, 1);
    });
  });

  it('validates a run request end to end through submit, with role ARN and output path', async () => {
    sageMaker.on(CreateTrainingJobCommand).resolves({ TrainingJobArn: 'arn' });
    await scheduler.submit(app(), { role: ROLE_ARN, output_path: 's3://b/o', max_retry_attempts: 2 });
    expect(sageMaker).toHaveReceivedCommandWith(CreateTrainingJobCommand, {
      RoleArn: ROLE_ARN,
      OutputDataConfig: { S3OutputPath: 's3://b/o' },
      RetryStrategy: { MaximumRetryAttempts: 2 },
    });
  });
});
