import {
  BatchServiceException,
  CancelJobCommand,
  ClientException,
  DeregisterJobDefinitionCommand,
  DescribeJobDefinitionsCommand,
  DescribeJobQueuesCommand,
  DescribeJobsCommand,
  ListJobsCommand,
  RegisterJobDefinitionCommand,
  ServerException,
  SubmitJobCommand,
  TerminateJobCommand,
} from '@aws-sdk/client-batch';
import { GetLogEventsCommand } from '@aws-sdk/client-cloudwatch-logs';
import 'aws-sdk-client-mock-vitest/extend';
import { describe, expect, it } from 'vitest';
import { CANCEL_REASON_PREFIX } from '../../../lib/schedulers/aws-batch/index.js';
import { BackendAccessDeniedError, BackendError } from '../../../lib/schedulers/errors.js';
import {
  makeAppDef,
  makeResource,
  makeRole,
  namedResource,
  ValidationError,
} from '../../../lib/specs/index.js';
import { ACCOUNT, JOB_ARN, JOB_ID, mockedScheduler, nodeJob, parentJob, QUEUE_ARN } from './helpers.js';

const APP_ID = 'gpu:train-t4rcs9x6sv1m';
const DEFINITION_ARN = `arn:aws:batch:us-east-1:${ACCOUNT}:job-definition/train-t4rcs9x6sv1m:1`;

function clientException(message: string): ClientException {
  return new ClientException({ message, $metadata: { httpStatusCode: 400 } });
}

function accessDenied(action: string): BatchServiceException {
  return new BatchServiceException({
    name: 'AccessDeniedException',
    $fault: 'client',
    $metadata: { httpStatusCode: 403 },
    message: `User: arn:aws:sts::${ACCOUNT}:assumed-role/api/fn is not authorized to perform: batch:${action}`,
  });
}

function throttled(): BatchServiceException {
  return new BatchServiceException({
    name: 'TooManyRequestsException',
    $fault: 'client',
    $metadata: { httpStatusCode: 429, attempts: 5 },
    message: 'Too Many Requests.',
  });
}

/** An app whose command embeds the job name (per-run definition, as TorchX). */
function perRunApp() {
  return makeAppDef({
    name: 'train',
    roles: [
      makeRole({
        name: 'trainer',
        image: 'ghcr.io/pytorch/torchx:0.8.0dev0',
        entrypoint: 'bash',
        args: ['-c', 'python train.py --run ${app_id}'],
        numReplicas: 2,
        resource: namedResource('aws_g5.2xlarge'),
      }),
    ],
  });
}

/** An app whose definition can be shared between runs. */
function sharedApp() {
  return makeAppDef({
    name: 'echo',
    roles: [
      makeRole({
        name: 'echo',
        image: 'alpine:3',
        entrypoint: 'echo',
        args: ['hi'],
        resource: makeResource({ cpu: 1, gpu: 0, memMB: 1024 }),
      }),
    ],
  });
}

/** Stubs ListJobs (JOB_NAME) and DescribeJobs for the parent and its node jobs. */
function stubJob(
  batch: ReturnType<typeof mockedScheduler>['batch'],
  parent = parentJob(),
  nodes = [nodeJob(0), nodeJob(1), nodeJob(2)],
) {
  batch.on(ListJobsCommand).resolves({
    jobSummaryList: [
      { jobId: 'other', jobName: 'TRAIN-T4RCS9X6SV1M', createdAt: parent.createdAt ?? 0 + 10 },
      { jobId: parent.jobId, jobName: parent.jobName, jobArn: parent.jobArn, createdAt: parent.createdAt },
    ],
  });
  batch.on(DescribeJobsCommand).callsFake((input: { jobs: string[] }) => ({
    jobs: [parent, ...nodes].filter((job) => input.jobs.includes(job.jobId ?? '')),
  }));
}

describe('AwsBatchScheduler', () => {
  it('reports its capabilities', () => {
    expect(mockedScheduler().scheduler.capabilities()).toEqual({
      cancel: true,
      logs: true,
      describe: 'full',
      distributed: true,
      mounts: true,
      retries: true,
      elasticity: false,
    });
  });

  it('splits app ids at the last colon so queue ARNs work', () => {
    const { scheduler } = mockedScheduler();
    expect(scheduler.nativeNameOf(`${QUEUE_ARN}:train-x1`)).toBe('train-x1');
    expect(scheduler.nativeNameOf('gpu:train-x1')).toBe('train-x1');
  });

  describe('schedule', () => {
    it('registers a per-run definition and submits the job with the registered revision', async () => {
      const { scheduler, batch } = mockedScheduler();
      batch.on(RegisterJobDefinitionCommand).resolves({
        jobDefinitionName: 'train-t4rcs9x6sv1m',
        jobDefinitionArn: DEFINITION_ARN,
        revision: 1,
      });
      batch.on(SubmitJobCommand).resolves({ jobArn: JOB_ARN, jobName: 'train-t4rcs9x6sv1m', jobId: JOB_ID });
      const info = scheduler.submitDryrun(perRunApp(), { queue: 'gpu' });

      await expect(scheduler.schedule(info)).resolves.toBe(APP_ID);

      expect(batch).toHaveReceivedCommandTimes(DescribeJobDefinitionsCommand, 0);
      expect(batch).toHaveReceivedCommandExactlyOnceWith(RegisterJobDefinitionCommand, {
        ...info.request.registerJobDefinition,
      });
      expect(batch).toHaveReceivedCommandExactlyOnceWith(SubmitJobCommand, {
        ...info.request.submitJob,
        jobDefinition: DEFINITION_ARN,
      });
    });

    it('registers a shared definition once, then submits each repeat with the remembered revision alone', async () => {
      const { scheduler, batch } = mockedScheduler();
      const info = scheduler.submitDryrun(sharedApp(), { queue: 'gpu' });
      const name = info.request.registerJobDefinition.jobDefinitionName;
      const arn = `arn:aws:batch:us-east-1:${ACCOUNT}:job-definition/${name}:1`;
      batch
        .on(RegisterJobDefinitionCommand)
        .resolves({ jobDefinitionName: name, jobDefinitionArn: arn, revision: 1 });
      batch.on(SubmitJobCommand).resolves({ jobArn: JOB_ARN, jobName: 'echo-t4rcs9x6sv1m', jobId: JOB_ID });

      await expect(scheduler.schedule(info)).resolves.toBe('gpu:echo-t4rcs9x6sv1m');
      // A new definition: RegisterJobDefinition + SubmitJob, and no lookup of what exists.
      expect(batch.calls()).toHaveLength(2);
      expect(batch).toHaveReceivedCommandOnce(RegisterJobDefinitionCommand);

      await scheduler.schedule(scheduler.submitDryrun(sharedApp(), { queue: 'gpu' }));
      await scheduler.schedule(scheduler.submitDryrun(sharedApp(), { queue: 'gpu' }));
      // Each repeat: one SubmitJob with the remembered revision.
      expect(batch.calls()).toHaveLength(4);
      expect(batch).toHaveReceivedCommandTimes(DescribeJobDefinitionsCommand, 0);
      expect(batch).toHaveReceivedCommandOnce(RegisterJobDefinitionCommand);
      expect(batch).toHaveReceivedCommandTimes(SubmitJobCommand, 3);
      expect(batch).toHaveReceivedNthCommandWith(SubmitJobCommand, 3, {
        ...info.request.submitJob,
        jobDefinition: arn,
      });
    });

    it('remembers a definition by its content: a different shared definition is registered on its own', async () => {
      const { scheduler, batch } = mockedScheduler();
      const other = sharedApp();
      (other.roles[0] as { args: string[] }).args = ['bye'];
      batch.on(RegisterJobDefinitionCommand).callsFake((input: { jobDefinitionName: string }) => ({
        jobDefinitionName: input.jobDefinitionName,
        jobDefinitionArn: `arn:aws:batch:us-east-1:${ACCOUNT}:job-definition/${input.jobDefinitionName}:1`,
        revision: 1,
      }));
      batch.on(SubmitJobCommand).resolves({ jobArn: JOB_ARN, jobName: 'echo-t4rcs9x6sv1m', jobId: JOB_ID });

      const first = scheduler.submitDryrun(sharedApp(), { queue: 'gpu' });
      const second = scheduler.submitDryrun(other, { queue: 'gpu' });
      await scheduler.schedule(first);
      await scheduler.schedule(second);
      await scheduler.schedule(scheduler.submitDryrun(other, { queue: 'gpu' }));

      expect(first.request.registerJobDefinition.jobDefinitionName).not.toBe(
        second.request.registerJobDefinition.jobDefinitionName,
      );
      expect(batch).toHaveReceivedCommandTimes(RegisterJobDefinitionCommand, 2);
      expect(batch).toHaveReceivedNthCommandWith(SubmitJobCommand, 3, {
        jobDefinition: `arn:aws:batch:us-east-1:${ACCOUNT}:job-definition/${second.request.registerJobDefinition.jobDefinitionName}:1`,
      });
    });

    it('registers anew when the remembered revision was deregistered before the submission', async () => {
      const { scheduler, batch } = mockedScheduler();
      const info = scheduler.submitDryrun(sharedApp(), { queue: 'gpu' });
      const name = info.request.registerJobDefinition.jobDefinitionName ?? '';
      const arn = (revision: number) =>
        `arn:aws:batch:us-east-1:${ACCOUNT}:job-definition/${name}:${revision}`;
      batch
        .on(RegisterJobDefinitionCommand)
        .resolvesOnce({ jobDefinitionName: name, jobDefinitionArn: arn(1), revision: 1 })
        .resolves({ jobDefinitionName: name, jobDefinitionArn: arn(2), revision: 2 });
      batch
        .on(SubmitJobCommand)
        .resolvesOnce({ jobArn: JOB_ARN, jobName: 'echo-t4rcs9x6sv1m', jobId: JOB_ID })
        .rejectsOnce(clientException(`Job definition ${arn(1)} is INACTIVE`))
        .resolves({ jobArn: JOB_ARN, jobName: 'echo-t4rcs9x6sv1m', jobId: JOB_ID });

      await scheduler.schedule(info);
      await expect(scheduler.schedule(scheduler.submitDryrun(sharedApp(), { queue: 'gpu' }))).resolves.toBe(
        'gpu:echo-t4rcs9x6sv1m',
      );
      await scheduler.schedule(scheduler.submitDryrun(sharedApp(), { queue: 'gpu' }));

      expect(batch).toHaveReceivedCommandTimes(RegisterJobDefinitionCommand, 2);
      expect(batch).toHaveReceivedNthCommandWith(SubmitJobCommand, 2, { jobDefinition: arn(1) });
      expect(batch).toHaveReceivedNthCommandWith(SubmitJobCommand, 3, { jobDefinition: arn(2) });
      // The fresh revision is the one remembered.
      expect(batch).toHaveReceivedNthCommandWith(SubmitJobCommand, 4, { jobDefinition: arn(2) });
    });

    it('does not register anew for a submission rejected for another reason', async () => {
      const { scheduler, batch } = mockedScheduler();
      const info = scheduler.submitDryrun(sharedApp(), { queue: 'gpu' });
      const name = info.request.registerJobDefinition.jobDefinitionName ?? '';
      batch.on(RegisterJobDefinitionCommand).resolves({
        jobDefinitionName: name,
        jobDefinitionArn: `arn:aws:batch:us-east-1:${ACCOUNT}:job-definition/${name}:1`,
        revision: 1,
      });
      batch
        .on(SubmitJobCommand)
        .resolvesOnce({ jobArn: JOB_ARN, jobName: 'echo-t4rcs9x6sv1m', jobId: JOB_ID })
        .rejects(clientException('Too many tags'));

      await scheduler.schedule(info);
      await expect(scheduler.schedule(scheduler.submitDryrun(sharedApp(), { queue: 'gpu' }))).rejects.toThrow(
        /Too many tags/,
      );
      expect(batch).toHaveReceivedCommandOnce(RegisterJobDefinitionCommand);
    });

    it('rejects an unknown queue with a ValidationError naming cfg.queue', async () => {
      const { scheduler, batch } = mockedScheduler();
      batch.on(RegisterJobDefinitionCommand).resolves({ jobDefinitionArn: DEFINITION_ARN, revision: 1 });
      batch.on(SubmitJobCommand).rejects(clientException('JobQueue nope not found'));
      const error = await scheduler
        .schedule(scheduler.submitDryrun(perRunApp(), { queue: 'nope' }))
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).issues).toEqual([
        { path: 'cfg.queue', message: "AWS Batch rejected job queue 'nope': JobQueue nope not found" },
      ]);
    });

    it('reports access denied naming the action and sends nothing after it', async () => {
      const { scheduler, batch } = mockedScheduler();
      batch.on(RegisterJobDefinitionCommand).rejects(accessDenied('RegisterJobDefinition'));
      const error = await scheduler
        .schedule(scheduler.submitDryrun(perRunApp(), { queue: 'gpu' }))
        .catch((e) => e);
      expect(error).toBeInstanceOf(BackendAccessDeniedError);
      expect((error as Error).message).toMatch(
        /^AWS denied batch:RegisterJobDefinition \(AccessDeniedException: .*\)\. Grant batch:RegisterJobDefinition to the IAM role torchx-serverless runs as$/,
      );
      expect(batch).toHaveReceivedCommandTimes(SubmitJobCommand, 0);
    });

    it('reports throttling that outlasted the SDK retries as a retryable BackendError', async () => {
      const { scheduler, batch } = mockedScheduler();
      batch.on(RegisterJobDefinitionCommand).resolves({ jobDefinitionArn: DEFINITION_ARN, revision: 1 });
      batch.on(SubmitJobCommand).rejects(throttled());
      const error = await scheduler
        .schedule(scheduler.submitDryrun(perRunApp(), { queue: 'gpu' }))
        .catch((e) => e);
      expect(error).toBeInstanceOf(BackendError);
      expect((error as BackendError).retryable).toBe(true);
      expect((error as Error).message).toBe(
        'AWS throttled batch:SubmitJob (TooManyRequestsException) after 5 attempt(s); try again later',
      );
    });

    it('reports a server error as retryable and another client error as not', async () => {
      const server = mockedScheduler();
      server.batch
        .on(RegisterJobDefinitionCommand)
        .rejects(new ServerException({ message: 'boom', $metadata: {} }));
      const serverError = await server.scheduler
        .schedule(server.scheduler.submitDryrun(perRunApp(), { queue: 'gpu' }))
        .catch((e) => e);
      expect(serverError).toBeInstanceOf(BackendError);
      expect((serverError as BackendError).retryable).toBe(true);

      const client = mockedScheduler();
      client.batch.on(RegisterJobDefinitionCommand).rejects(clientException('Error executing request'));
      const clientError = await client.scheduler
        .schedule(client.scheduler.submitDryrun(perRunApp(), { queue: 'gpu' }))
        .catch((e) => e);
      expect((clientError as BackendError).retryable).toBe(false);
      expect((clientError as Error).message).toBe(
        'batch:RegisterJobDefinition was rejected by AWS (ClientException: Error executing request)',
      );
    });
  });

  describe('describe', () => {
    it('returns undefined for an app Batch does not know', async () => {
      const { scheduler, batch } = mockedScheduler();
      batch.on(ListJobsCommand).resolves({ jobSummaryList: [] });
      await expect(scheduler.describe(APP_ID)).resolves.toBeUndefined();
      expect(batch).toHaveReceivedCommandExactlyOnceWith(ListJobsCommand, {
        jobQueue: 'gpu',
        filters: [{ name: 'JOB_NAME', values: ['train-t4rcs9x6sv1m'] }],
      });
      expect(batch).toHaveReceivedCommandTimes(DescribeJobsCommand, 0);
    });

    it('returns undefined for an unknown queue or a malformed app id', async () => {
      const { scheduler, batch } = mockedScheduler();
      batch.on(ListJobsCommand).rejects(clientException('jobQueue nope does not exist'));
      await expect(scheduler.describe('nope:train-x1')).resolves.toBeUndefined();
      await expect(scheduler.describe('no-colon')).resolves.toBeUndefined();
      expect(batch).toHaveReceivedCommandTimes(ListJobsCommand, 1);
    });

    it('describes a running job with roles and per-replica statuses from its node jobs', async () => {
      const { scheduler, batch } = mockedScheduler();
      stubJob(batch, parentJob(), [
        nodeJob(0),
        nodeJob(1),
        nodeJob(2, {
          status: 'FAILED',
          statusReason: 'Essential container in task exited',
          container: { exitCode: 1, networkInterfaces: [{ privateIpv4Address: '10.0.0.12' }] },
        }),
      ]);

      const desc = await scheduler.describe(APP_ID);

      expect(batch).toHaveReceivedNthCommandWith(DescribeJobsCommand, 1, { jobs: [JOB_ID] });
      expect(batch).toHaveReceivedNthCommandWith(DescribeJobsCommand, 2, {
        jobs: [`${JOB_ID}#0`, `${JOB_ID}#1`, `${JOB_ID}#2`],
      });
      expect(desc).toEqual({
        appId: APP_ID,
        state: 'RUNNING',
        numRestarts: 0,
        msg: '<NONE>',
        structuredErrorMsg: '<NONE>',
        uiUrl: `https://us-east-1.console.aws.amazon.com/batch/home?region=us-east-1#jobs/mnp-job/${JOB_ID}`,
        metadata: {},
        updatedAt: 1_735_733_218_000,
        roles: [
          makeRole({
            name: 'ps',
            image: 'ghcr.io/pytorch/torchx:0.8.0dev0',
            entrypoint: 'python',
            args: ['-m', 'ps'],
            env: { TORCHX_ROLE_IDX: '0', TORCHX_ROLE_NAME: 'ps' },
            numReplicas: 1,
            resource: makeResource({ cpu: 2, gpu: 0, memMB: 4096 }),
          }),
          makeRole({
            name: 'trainer',
            image: 'ghcr.io/pytorch/torchx:0.8.0dev0',
            entrypoint: 'torchrun',
            args: ['--nnodes', '2', 'train.py'],
            env: { LR: '0.1', TORCHX_ROLE_IDX: '1', TORCHX_ROLE_NAME: 'trainer' },
            numReplicas: 2,
            resource: makeResource({ cpu: 8, gpu: 1, memMB: 31456 }),
          }),
        ],
        rolesStatuses: [
          {
            role: 'ps',
            replicas: [
              { id: 0, role: 'ps', state: 'RUNNING', hostname: '10.0.0.10', structuredErrorMsg: '<NONE>' },
            ],
          },
          {
            role: 'trainer',
            replicas: [
              {
                id: 0,
                role: 'trainer',
                state: 'RUNNING',
                hostname: '10.0.0.11',
                structuredErrorMsg: '<NONE>',
              },
              {
                id: 1,
                role: 'trainer',
                state: 'FAILED',
                hostname: '10.0.0.12',
                structuredErrorMsg: '<NONE>',
                exitCode: 1,
                reason: 'Essential container in task exited',
              },
            ],
          },
        ],
      });
    });

    it('does not look up node jobs before the job starts and reports its replicas PENDING', async () => {
      const { scheduler, batch } = mockedScheduler();
      stubJob(batch, parentJob({ status: 'RUNNABLE', startedAt: undefined }), []);
      const desc = await scheduler.describe(APP_ID);
      expect(batch).toHaveReceivedCommandTimes(DescribeJobsCommand, 1);
      expect(desc?.state).toBe('PENDING');
      expect(desc?.updatedAt).toBe(1_735_732_800_000);
      expect(desc?.rolesStatuses.flatMap((r) => r.replicas.map((x) => x.state))).toEqual([
        'PENDING',
        'PENDING',
        'PENDING',
      ]);
    });

    it('reports a job cancelled through torchx-serverless as CANCELLED, with restarts and the reason', async () => {
      const { scheduler, batch } = mockedScheduler();
      const reason = `${CANCEL_REASON_PREFIX}no longer needed`;
      stubJob(
        batch,
        parentJob({
          status: 'FAILED',
          statusReason: reason,
          stoppedAt: 1_735_736_000_000,
          attempts: [{ container: { exitCode: 137 } }, { container: { exitCode: 143 } }],
        }),
        [0, 1, 2].map((i) => nodeJob(i, { status: 'FAILED', statusReason: reason })),
      );
      const desc = await scheduler.describe(APP_ID);
      expect(desc).toMatchObject({
        state: 'CANCELLED',
        numRestarts: 1,
        msg: `${reason}; exit code 143`,
        updatedAt: 1_735_736_000_000,
      });
      expect(desc?.rolesStatuses.flatMap((r) => r.replicas.map((x) => x.state))).toEqual([
        'CANCELLED',
        'CANCELLED',
        'CANCELLED',
      ]);
    });

    it("adds the first failed node's status and container reason to a failed multi-node job's message", async () => {
      const { scheduler, batch } = mockedScheduler();
      stubJob(
        batch,
        parentJob({
          status: 'FAILED',
          statusReason: 'Essential container in task exited',
          stoppedAt: 1_735_736_000_000,
        }),
        [
          nodeJob(0, { status: 'SUCCEEDED' }),
          nodeJob(1, {
            status: 'FAILED',
            statusReason: 'Essential container in task exited',
            container: { exitCode: 127, reason: 'CannotStartContainerError: torchrun: not found' },
          }),
          nodeJob(2, { status: 'SUCCEEDED' }),
        ],
      );
      const desc = await scheduler.describe(APP_ID);
      expect(desc?.state).toBe('FAILED');
      expect(desc?.msg).toContain('CannotStartContainerError: torchrun: not found');
      expect(desc?.msg).toMatch(
        /^Essential container in task exited; \w+\[\d+\]: Essential container in task exited; /,
      );
    });

    it('describes up to 100 node jobs per call', async () => {
      const { scheduler, batch } = mockedScheduler();
      const parent = parentJob();
      parent.nodeProperties = {
        numNodes: 150,
        mainNode: 0,
        nodeRangeProperties: [{ targetNodes: '0:149', container: { environment: [] } }],
      };
      stubJob(batch, parent, []);
      const desc = await scheduler.describe(APP_ID);
      expect(batch).toHaveReceivedCommandTimes(DescribeJobsCommand, 3);
      const sizes = batch.commandCalls(DescribeJobsCommand).map((c) => c.args[0].input.jobs?.length);
      expect(sizes).toEqual([1, 100, 50]);
      expect(desc?.roles[0]?.name).toBe('node');
      expect(desc?.rolesStatuses[0]?.replicas).toHaveLength(150);
    });

    it('reports access denied on ListJobs naming the action', async () => {
      const { scheduler, batch } = mockedScheduler();
      batch.on(ListJobsCommand).rejects(accessDenied('ListJobs'));
      await expect(scheduler.describe(APP_ID)).rejects.toThrow(BackendAccessDeniedError);
      await expect(scheduler.describe(APP_ID)).rejects.toThrow(/Grant batch:ListJobs/);
    });
  });

  describe('list', () => {
    it('lists torchx jobs created in the window on the configured queues', async () => {
      const { scheduler, batch } = mockedScheduler({ queues: ['gpu'] });
      batch
        .on(ListJobsCommand)
        .resolvesOnce({ jobSummaryList: [{ jobId: 'a', jobName: 'train-a' }], nextToken: 't2' })
        .resolvesOnce({ jobSummaryList: [{ jobId: 'b', jobName: 'other-b' }] });
      batch.on(DescribeJobsCommand).callsFake((input: { jobs: string[] }) => ({
        jobs: input.jobs.map((id) =>
          id === 'a'
            ? parentJob({ jobId: 'a', jobName: 'train-a', status: 'SUCCEEDED' })
            : parentJob({ jobId: 'b', jobName: 'other-b', tags: { team: 'x' } }),
        ),
      }));

      await expect(scheduler.list()).resolves.toEqual([
        { appId: 'gpu:train-a', state: 'SUCCEEDED', appHandle: '<NOT_SET>', name: 'train' },
      ]);
      expect(batch).toHaveReceivedNthCommandWith(ListJobsCommand, 1, {
        jobQueue: 'gpu',
        filters: [{ name: 'AFTER_CREATED_AT', values: [String(1_735_740_000_000 - 30 * 86_400_000)] }],
      });
      expect(batch).toHaveReceivedNthCommandWith(ListJobsCommand, 2, { nextToken: 't2' });
      expect(batch).toHaveReceivedCommandTimes(DescribeJobQueuesCommand, 0);
    });

    it('scans every queue of the account when none is configured', async () => {
      const { scheduler, batch } = mockedScheduler({ listWindowDays: 1 });
      batch
        .on(DescribeJobQueuesCommand)
        .resolvesOnce({
          jobQueues: [
            {
              jobQueueName: 'cpu',
              jobQueueArn: 'x',
              priority: 1,
              state: 'ENABLED',
              computeEnvironmentOrder: [],
            },
          ],
          nextToken: 'n',
        })
        .resolvesOnce({
          jobQueues: [
            {
              jobQueueName: 'gpu',
              jobQueueArn: 'y',
              priority: 1,
              state: 'ENABLED',
              computeEnvironmentOrder: [],
            },
          ],
        });
      batch.on(ListJobsCommand).resolves({ jobSummaryList: [] });
      await expect(scheduler.list()).resolves.toEqual([]);
      expect(batch).toHaveReceivedCommandWith(ListJobsCommand, { jobQueue: 'cpu' });
      expect(batch).toHaveReceivedCommandWith(ListJobsCommand, {
        jobQueue: 'gpu',
        filters: [{ name: 'AFTER_CREATED_AT', values: [String(1_735_740_000_000 - 86_400_000)] }],
      });
      expect(batch).toHaveReceivedCommandTimes(DescribeJobsCommand, 0);
    });
  });

  describe('cancel', () => {
    it('terminates a running job with the prefixed reason', async () => {
      const { scheduler, batch } = mockedScheduler();
      stubJob(batch);
      batch.on(TerminateJobCommand).resolves({});
      await scheduler.cancel(APP_ID, 'user asked');
      expect(batch).toHaveReceivedCommandExactlyOnceWith(TerminateJobCommand, {
        jobId: JOB_ID,
        reason: `${CANCEL_REASON_PREFIX}user asked`,
      });
      expect(batch).toHaveReceivedCommandTimes(CancelJobCommand, 0);
    });

    it('cancels a job that has not started and leaves it at that when it stays unstarted', async () => {
      const { scheduler, batch } = mockedScheduler();
      stubJob(batch, parentJob({ status: 'RUNNABLE' }), []);
      batch.on(CancelJobCommand).resolves({});
      await scheduler.cancel(APP_ID);
      expect(batch).toHaveReceivedCommandExactlyOnceWith(CancelJobCommand, {
        jobId: JOB_ID,
        reason: `${CANCEL_REASON_PREFIX}cancelled via torchx-serverless`,
      });
      expect(batch).toHaveReceivedCommandTimes(TerminateJobCommand, 0);
    });

    it('terminates a job that started between the lookup and CancelJob', async () => {
      const { scheduler, batch } = mockedScheduler();
      batch
        .on(ListJobsCommand)
        .resolves({ jobSummaryList: [{ jobId: JOB_ID, jobName: 'train-t4rcs9x6sv1m' }] });
      batch
        .on(DescribeJobsCommand)
        .resolvesOnce({ jobs: [parentJob({ status: 'RUNNABLE' })] })
        .resolves({ jobs: [parentJob({ status: 'STARTING' })] });
      batch.on(CancelJobCommand).resolves({});
      batch.on(TerminateJobCommand).resolves({});
      await scheduler.cancel(APP_ID, 'x');
      expect(batch).toHaveReceivedCommandOnce(CancelJobCommand);
      expect(batch).toHaveReceivedCommandOnce(TerminateJobCommand);
    });

    it('truncates the reason to the 1024 characters Batch accepts', async () => {
      const { scheduler, batch } = mockedScheduler();
      stubJob(batch);
      batch.on(TerminateJobCommand).resolves({});
      await scheduler.cancel(APP_ID, 'r'.repeat(2000));
      const reason = batch.commandCalls(TerminateJobCommand)[0]?.args[0].input.reason;
      expect(reason).toHaveLength(1024);
      expect(reason?.startsWith(CANCEL_REASON_PREFIX)).toBe(true);
    });

    it('does nothing for a finished or unknown job', async () => {
      const finished = mockedScheduler();
      stubJob(finished.batch, parentJob({ status: 'SUCCEEDED' }));
      await finished.scheduler.cancel(APP_ID);
      expect(finished.batch).toHaveReceivedCommandTimes(TerminateJobCommand, 0);
      expect(finished.batch).toHaveReceivedCommandTimes(CancelJobCommand, 0);

      const unknown = mockedScheduler();
      unknown.batch.on(ListJobsCommand).resolves({ jobSummaryList: [] });
      await unknown.scheduler.cancel(APP_ID);
      expect(unknown.batch).toHaveReceivedCommandTimes(TerminateJobCommand, 0);
    });

    it('reports access denied on TerminateJob naming the action', async () => {
      const { scheduler, batch } = mockedScheduler();
      stubJob(batch);
      batch.on(TerminateJobCommand).rejects(accessDenied('TerminateJob'));
      await expect(scheduler.cancel(APP_ID)).rejects.toThrow(/^AWS denied batch:TerminateJob/);
    });
  });

  describe('delete', () => {
    it('terminates a live job and deregisters the definition revision it ran with', async () => {
      const { scheduler, batch } = mockedScheduler();
      stubJob(batch);
      batch.on(TerminateJobCommand).resolves({});
      batch.on(DeregisterJobDefinitionCommand).resolves({});
      await scheduler.delete(APP_ID);
      expect(batch).toHaveReceivedCommandExactlyOnceWith(TerminateJobCommand, {
        jobId: JOB_ID,
        reason: `${CANCEL_REASON_PREFIX}deleted via torchx-serverless`,
      });
      expect(batch).toHaveReceivedCommandExactlyOnceWith(DeregisterJobDefinitionCommand, {
        jobDefinition: DEFINITION_ARN,
      });
      expect(batch).toHaveReceivedCommandTimes(ListJobsCommand, 1);
    });

    it('forgets a shared definition it deregistered, so the next run registers it anew', async () => {
      const { scheduler, batch } = mockedScheduler();
      const info = scheduler.submitDryrun(sharedApp(), { queue: 'gpu' });
      const name = info.request.registerJobDefinition.jobDefinitionName;
      batch.on(RegisterJobDefinitionCommand).resolves({
        jobDefinitionName: name,
        jobDefinitionArn: DEFINITION_ARN,
        revision: 1,
      });
      batch.on(SubmitJobCommand).resolves({ jobArn: JOB_ARN, jobName: 'echo-t4rcs9x6sv1m', jobId: JOB_ID });
      stubJob(batch);
      batch.on(TerminateJobCommand).resolves({});
      batch.on(DeregisterJobDefinitionCommand).resolves({});

      await scheduler.schedule(info);
      await scheduler.delete(APP_ID);
      await scheduler.schedule(scheduler.submitDryrun(sharedApp(), { queue: 'gpu' }));

      expect(batch).toHaveReceivedCommandTimes(RegisterJobDefinitionCommand, 2);
      expect(batch).toHaveReceivedCommandTimes(SubmitJobCommand, 2);
    });

    it('only deregisters for a finished job, and accepts an already inactive definition', async () => {
      const { scheduler, batch } = mockedScheduler();
      stubJob(batch, parentJob({ status: 'FAILED' }));
      batch.on(DeregisterJobDefinitionCommand).rejects(clientException('Job definition is INACTIVE'));
      await expect(scheduler.delete(APP_ID)).resolves.toBeUndefined();
      expect(batch).toHaveReceivedCommandTimes(TerminateJobCommand, 0);
    });

    it('does nothing for an unknown job and reports access denied on deregistering', async () => {
      const unknown = mockedScheduler();
      unknown.batch.on(ListJobsCommand).resolves({ jobSummaryList: [] });
      await unknown.scheduler.delete(APP_ID);
      expect(unknown.batch).toHaveReceivedCommandTimes(DeregisterJobDefinitionCommand, 0);

      const denied = mockedScheduler();
      stubJob(denied.batch, parentJob({ status: 'SUCCEEDED' }));
      denied.batch.on(DeregisterJobDefinitionCommand).rejects(accessDenied('DeregisterJobDefinition'));
      await expect(denied.scheduler.delete(APP_ID)).rejects.toThrow(BackendAccessDeniedError);
    });
  });
});

describe('AwsBatchScheduler error mapping of every AWS call', () => {
  type Mocked = ReturnType<typeof mockedScheduler>;
  const calls: {
    action: string;
    service: 'batch' | 'logs';
    arrange: (m: Mocked, error: Error) => void;
    act: (m: Mocked) => Promise<unknown>;
  }[] = [
    {
      action: 'RegisterJobDefinition',
      service: 'batch',
      arrange: (m, e) => m.batch.on(RegisterJobDefinitionCommand).rejects(e),
      act: (m) => m.scheduler.schedule(m.scheduler.submitDryrun(perRunApp(), { queue: 'gpu' })),
    },
    {
      action: 'SubmitJob',
      service: 'batch',
      arrange: (m, e) => {
        m.batch.on(RegisterJobDefinitionCommand).resolves({ jobDefinitionArn: DEFINITION_ARN, revision: 1 });
        m.batch.on(SubmitJobCommand).rejects(e);
      },
      act: (m) => m.scheduler.schedule(m.scheduler.submitDryrun(perRunApp(), { queue: 'gpu' })),
    },
    {
      action: 'ListJobs',
      service: 'batch',
      arrange: (m, e) => m.batch.on(ListJobsCommand).rejects(e),
      act: (m) => m.scheduler.describe(APP_ID),
    },
    {
      action: 'DescribeJobs',
      service: 'batch',
      arrange: (m, e) => {
        m.batch
          .on(ListJobsCommand)
          .resolves({ jobSummaryList: [{ jobId: JOB_ID, jobName: 'train-t4rcs9x6sv1m' }] });
        m.batch.on(DescribeJobsCommand).rejects(e);
      },
      act: (m) => m.scheduler.describe(APP_ID),
    },
    {
      action: 'DescribeJobQueues',
      service: 'batch',
      arrange: (m, e) => m.batch.on(DescribeJobQueuesCommand).rejects(e),
      act: (m) => m.scheduler.list(),
    },
    {
      action: 'CancelJob',
      service: 'batch',
      arrange: (m, e) => {
        stubJob(m.batch, parentJob({ status: 'RUNNABLE' }), []);
        m.batch.on(CancelJobCommand).rejects(e);
      },
      act: (m) => m.scheduler.cancel(APP_ID),
    },
    {
      action: 'TerminateJob',
      service: 'batch',
      arrange: (m, e) => {
        stubJob(m.batch);
        m.batch.on(TerminateJobCommand).rejects(e);
      },
      act: (m) => m.scheduler.cancel(APP_ID),
    },
    {
      action: 'DeregisterJobDefinition',
      service: 'batch',
      arrange: (m, e) => {
        stubJob(m.batch, parentJob({ status: 'SUCCEEDED' }));
        m.batch.on(DeregisterJobDefinitionCommand).rejects(e);
      },
      act: (m) => m.scheduler.delete(APP_ID),
    },
    {
      action: 'GetLogEvents',
      service: 'logs',
      arrange: (m, e) => {
        stubJob(m.batch);
        m.logs.on(GetLogEventsCommand).rejects(e);
      },
      act: (m) => m.scheduler.readLogs(APP_ID, { role: 'ps' }),
    },
  ];

  it.each(calls.map((c) => [c.action, c] as const))(
    'maps access denied on %s to BackendAccessDeniedError',
    async (_a, c) => {
      const mocked = mockedScheduler();
      c.arrange(mocked, accessDenied(c.action));
      const error = await c.act(mocked).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(BackendAccessDeniedError);
      expect((error as Error).message).toContain(`Grant ${c.service}:${c.action} to the IAM role`);
    },
  );

  it.each(calls.map((c) => [c.action, c] as const))(
    'maps throttling on %s to a retryable BackendError',
    async (_a, c) => {
      const mocked = mockedScheduler();
      c.arrange(mocked, throttled());
      const error = await c.act(mocked).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(BackendError);
      expect((error as BackendError).retryable).toBe(true);
      expect((error as Error).message).toBe(
        `AWS throttled ${c.service}:${c.action} (TooManyRequestsException) after 5 attempt(s); try again later`,
      );
    },
  );
});
