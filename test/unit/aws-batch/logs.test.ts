import { DescribeJobsCommand, ListJobsCommand } from '@aws-sdk/client-batch';
import {
  GetLogEventsCommand,
  InvalidParameterException,
  ResourceNotFoundException,
} from '@aws-sdk/client-cloudwatch-logs';
import 'aws-sdk-client-mock-vitest/extend';
import type { JobDetail } from '@aws-sdk/client-batch';
import { describe, expect, it } from 'vitest';
import { LOG_SETTLE_MS } from '../../../lib/schedulers/aws-batch/index.js';
import {
  InvalidLogTokenError,
  UnknownReplicaError,
  UnknownRoleError,
} from '../../../lib/schedulers/errors.js';
import { compileLogFilter } from '../../../lib/schedulers/log-filter.js';
import { encodeLogToken } from '../../../lib/schedulers/logs.js';
import { UnknownAppError, ValidationError } from '../../../lib/specs/index.js';
import { JOB_ID, mockedScheduler, nodeJob, parentJob } from './helpers.js';

const APP_ID = 'gpu:train-t4rcs9x6sv1m';
const NOW = 1_735_740_000_000;

function setup(jobs: { parent?: JobDetail; nodes?: JobDetail[] } = {}) {
  const mocked = mockedScheduler({ now: NOW });
  const parent = jobs.parent ?? parentJob();
  const nodes = jobs.nodes ?? [nodeJob(0), nodeJob(1), nodeJob(2)];
  mocked.batch.on(ListJobsCommand).resolves({ jobSummaryList: [{ jobId: JOB_ID, jobName: parent.jobName }] });
  mocked.batch.on(DescribeJobsCommand).callsFake((input: { jobs: string[] }) => ({
    jobs: [parent, ...nodes].filter((job) => input.jobs.includes(job.jobId ?? '')),
  }));
  return mocked;
}

function events(...messages: string[]) {
  return messages.map((message, i) => ({ timestamp: 1_735_733_300_000 + i, message, ingestionTime: 0 }));
}

describe('AwsBatchScheduler logs', () => {
  it("reads the node stream of the role's replica from the head, in the role's log group", async () => {
    const { scheduler, batch, logs } = setup();
    logs.on(GetLogEventsCommand).resolves({ events: events('epoch 1', 'epoch 2'), nextForwardToken: 'f/1' });

    const page = await scheduler.readLogs(APP_ID, { role: 'trainer', replica: 1 });

    expect(page.lines).toEqual(['epoch 1', 'epoch 2']);
    expect(page.caughtUp).toBe(false);
    expect(batch).toHaveReceivedNthCommandWith(DescribeJobsCommand, 2, { jobs: [`${JOB_ID}#2`] });
    expect(logs).toHaveReceivedCommandExactlyOnceWith(GetLogEventsCommand, {
      logGroupName: '/ml/jobs',
      logStreamName: 'train-t4rcs9x6sv1m/default/task2',
      startFromHead: true,
      limit: 1000,
    });
  });

  it('uses /aws/batch/job when the role has no awslogs-group, and passes since/until and the limit', async () => {
    const { scheduler, logs } = setup();
    logs.on(GetLogEventsCommand).resolves({ events: [], nextForwardToken: 'f/0' });
    await scheduler.readLogs(APP_ID, {
      role: 'ps',
      since: new Date(1_735_733_000_000),
      until: new Date(1_735_734_000_000),
      limit: 10,
    });
    expect(logs).toHaveReceivedNthCommandWith(GetLogEventsCommand, 1, {
      logGroupName: '/aws/batch/job',
      logStreamName: 'train-t4rcs9x6sv1m/default/task0',
      startFromHead: true,
      limit: 10,
      startTime: 1_735_733_000_000,
      endTime: 1_735_734_000_000,
    });
  });

  it('continues from the token with one DescribeJobs and reports caught up when CloudWatch repeats the token', async () => {
    const { scheduler, batch, logs } = setup();
    logs
      .on(GetLogEventsCommand)
      .resolvesOnce({ events: events('a'), nextForwardToken: 'f/1' })
      .resolvesOnce({ events: events('b'), nextForwardToken: 'f/2' })
      .resolvesOnce({ events: [], nextForwardToken: 'f/2' });

    const first = await scheduler.readLogs(APP_ID, { role: 'ps' });
    const second = await scheduler.readLogs(APP_ID, { role: 'ps', nextToken: first.nextToken });
    const third = await scheduler.readLogs(APP_ID, { role: 'ps', nextToken: second.nextToken });

    expect([first.lines, second.lines, third.lines]).toEqual([['a'], ['b'], []]);
    expect([first.caughtUp, second.caughtUp, third.caughtUp]).toEqual([false, false, true]);
    expect(third.nextToken).toBeDefined();
    expect(batch).toHaveReceivedCommandTimes(ListJobsCommand, 1);
    expect(batch).toHaveReceivedNthCommandWith(DescribeJobsCommand, 3, { jobs: [JOB_ID, `${JOB_ID}#0`] });
    expect(logs).toHaveReceivedNthCommandWith(GetLogEventsCommand, 3, { nextToken: 'f/2' });
  });

  it('ends the log once the node has finished and CloudWatch has settled', async () => {
    const stoppedAt = NOW - LOG_SETTLE_MS;
    const { scheduler, logs } = setup({
      parent: parentJob({ status: 'SUCCEEDED', stoppedAt }),
      nodes: [
        nodeJob(0, {
          status: 'SUCCEEDED',
          stoppedAt,
          attempts: [{ container: { exitCode: 0, logStreamName: 'train-t4rcs9x6sv1m/default/task0' } }],
        }),
      ],
    });
    logs
      .on(GetLogEventsCommand)
      .resolvesOnce({ events: events('done'), nextForwardToken: 'f/1' })
      .resolvesOnce({ events: [], nextForwardToken: 'f/1' });
    const first = await scheduler.readLogs(APP_ID, { role: 'ps' });
    const last = await scheduler.readLogs(APP_ID, { role: 'ps', nextToken: first.nextToken });
    expect(last).toEqual({ lines: [], caughtUp: true });
  });

  it('keeps the token for a node that stopped moments ago, so late lines are still read', async () => {
    const { scheduler, logs } = setup({
      nodes: [nodeJob(0, { status: 'FAILED', stoppedAt: NOW - 1_000 })],
    });
    logs.on(GetLogEventsCommand).resolves({ events: [], nextForwardToken: 'f/1' });
    const first = await scheduler.readLogs(APP_ID, { role: 'ps' });
    const second = await scheduler.readLogs(APP_ID, { role: 'ps', nextToken: first.nextToken });
    expect(second.caughtUp).toBe(true);
    expect(second.nextToken).toBeDefined();
  });

  it("moves on to a retried attempt's stream once the current one is read", async () => {
    const attempt1 = 'train-t4rcs9x6sv1m/default/attempt1';
    const attempt2 = 'train-t4rcs9x6sv1m/default/attempt2';
    const mocked = mockedScheduler({ now: NOW });
    mocked.batch
      .on(ListJobsCommand)
      .resolves({ jobSummaryList: [{ jobId: JOB_ID, jobName: 'train-t4rcs9x6sv1m' }] });
    mocked.batch
      .on(DescribeJobsCommand)
      .resolvesOnce({ jobs: [parentJob()] })
      .resolvesOnce({ jobs: [nodeJob(0, { container: { logStreamName: attempt1 } })] })
      .resolves({
        jobs: [
          parentJob(),
          nodeJob(0, {
            attempts: [{ container: { exitCode: 137, logStreamName: attempt1 } }],
            container: { logStreamName: attempt2 },
          }),
        ],
      });
    mocked.logs
      .on(GetLogEventsCommand, { logStreamName: attempt1 })
      .resolvesOnce({ events: events('first try'), nextForwardToken: 'a/1' })
      .resolves({ events: [], nextForwardToken: 'a/1' });
    mocked.logs
      .on(GetLogEventsCommand, { logStreamName: attempt2 })
      .resolvesOnce({ events: events('second try'), nextForwardToken: 'b/1' })
      .resolves({ events: [], nextForwardToken: 'b/1' });

    const lines: string[] = [];
    let token: string | undefined;
    for (let i = 0; i < 3; i++) {
      const page = await mocked.scheduler.readLogs(APP_ID, { role: 'ps', nextToken: token });
      lines.push(...page.lines);
      token = page.nextToken;
    }
    expect(lines).toEqual(['first try', 'second try']);
  });

  it('splits multi-line messages and applies the regex per line', async () => {
    const { scheduler, logs } = setup();
    logs
      .on(GetLogEventsCommand)
      .resolves({ events: events('foo\nbar\n', 'foobar'), nextForwardToken: 'f/1' });
    const page = await scheduler.readLogs(APP_ID, { role: 'ps', filter: compileLogFilter('foo.*') });
    expect(page.lines).toEqual(['foo', 'foobar']);
  });

  it('returns an empty, caught-up page with a token while the node has no stream yet', async () => {
    const { scheduler, logs } = setup({ parent: parentJob({ status: 'RUNNABLE' }), nodes: [] });
    const page = await scheduler.readLogs(APP_ID, { role: 'trainer', replica: 0 });
    expect(page.lines).toEqual([]);
    expect(page.caughtUp).toBe(true);
    expect(page.nextToken).toBeDefined();
    expect(logs).toHaveReceivedCommandTimes(GetLogEventsCommand, 0);
  });

  it('returns a complete empty log for a job cancelled before it started', async () => {
    const { scheduler } = setup({
      parent: parentJob({ status: 'FAILED', isCancelled: true, stoppedAt: undefined, startedAt: undefined }),
      nodes: [],
    });
    await expect(scheduler.readLogs(APP_ID, { role: 'ps' })).resolves.toEqual({ lines: [], caughtUp: true });
  });

  it('treats a stream CloudWatch does not have yet as empty', async () => {
    const { scheduler, logs } = setup();
    logs
      .on(GetLogEventsCommand)
      .rejects(
        new ResourceNotFoundException({ message: 'The specified log stream does not exist.', $metadata: {} }),
      );
    const page = await scheduler.readLogs(APP_ID, { role: 'ps' });
    expect(page).toMatchObject({ lines: [], caughtUp: true });
    expect(page.nextToken).toBeDefined();
  });

  it('rejects an unknown role naming the roles, and an out-of-range replica', async () => {
    const { scheduler } = setup();
    const roleError = await scheduler.readLogs(APP_ID, { role: 'worker' }).catch((e: unknown) => e);
    expect(roleError).toBeInstanceOf(UnknownRoleError);
    expect((roleError as Error).message).toBe("Unknown role 'worker'. The app has: ps, trainer");
    await expect(scheduler.readLogs(APP_ID, { role: 'trainer', replica: 2 })).rejects.toThrow(
      UnknownReplicaError,
    );
    await expect(scheduler.readLogs(APP_ID, { role: 'trainer', replica: -1 })).rejects.toThrow(
      UnknownReplicaError,
    );
  });

  it('accepts only the combined stream and page sizes of 1 to 10000', async () => {
    const { scheduler } = setup();
    const error = await scheduler
      .readLogs(APP_ID, { role: 'ps', streams: 'stderr' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).issues[0]?.path).toBe('streams');
    await expect(scheduler.readLogs(APP_ID, { role: 'ps', limit: 0 })).rejects.toThrow(/^limit: must be/);
  });

  it('rejects tokens that are not for this app, role, replica or node stream', async () => {
    const { scheduler, logs } = setup();
    logs.on(GetLogEventsCommand).resolves({ events: [], nextForwardToken: 'f/1' });
    const valid = { v: 1, job: JOB_ID, role: 'ps', replica: 0, node: 0 };
    const cases = [
      'not-a-token',
      encodeLogToken({ ...valid, role: 'trainer' }),
      encodeLogToken({ ...valid, stream: 'someone-else/default/task' }),
      encodeLogToken({ ...valid, node: 1 }),
      encodeLogToken({ ...valid, job: 'another-job' }),
    ];
    for (const nextToken of cases) {
      await expect(scheduler.readLogs(APP_ID, { role: 'ps', nextToken })).rejects.toThrow(
        InvalidLogTokenError,
      );
    }
    await expect(
      scheduler.readLogs('gpu:other-name', { role: 'ps', nextToken: encodeLogToken(valid) }),
    ).rejects.toThrow(InvalidLogTokenError);
  });

  it('reports an expired CloudWatch token as an invalid token', async () => {
    const { scheduler, logs } = setup();
    logs
      .on(GetLogEventsCommand)
      .resolvesOnce({ events: events('a'), nextForwardToken: 'f/1' })
      .rejects(
        new InvalidParameterException({ message: 'The specified nextToken is invalid.', $metadata: {} }),
      );
    const first = await scheduler.readLogs(APP_ID, { role: 'ps' });
    await expect(scheduler.readLogs(APP_ID, { role: 'ps', nextToken: first.nextToken })).rejects.toThrow(
      InvalidLogTokenError,
    );
  });

  it('reports an unknown app', async () => {
    const { scheduler, batch } = mockedScheduler();
    batch.on(ListJobsCommand).resolves({ jobSummaryList: [] });
    const error = await scheduler.readLogs(APP_ID, { role: 'ps' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnknownAppError);
    expect((error as Error).message).toContain('aws_batch://torchx/gpu:train-t4rcs9x6sv1m');
  });

  it('follows a running log with logIter until the app finishes', async () => {
    const polls: number[] = [];
    const mocked = mockedScheduler({
      now: NOW,
      sleep: async (ms) => {
        polls.push(ms);
        if (polls.length > 10) throw new Error('logIter did not stop');
      },
    });
    const running = parentJob();
    const finished = parentJob({ status: 'SUCCEEDED', stoppedAt: NOW - LOG_SETTLE_MS });
    const finishedNode = nodeJob(0, {
      status: 'SUCCEEDED',
      stoppedAt: NOW - LOG_SETTLE_MS,
      attempts: [{ container: { exitCode: 0, logStreamName: 'train-t4rcs9x6sv1m/default/task0' } }],
    });
    let finishedYet = false;
    mocked.batch
      .on(ListJobsCommand)
      .resolves({ jobSummaryList: [{ jobId: JOB_ID, jobName: 'train-t4rcs9x6sv1m' }] });
    mocked.batch.on(DescribeJobsCommand).callsFake((input: { jobs: string[] }) => ({
      jobs: (finishedYet ? [finished, finishedNode] : [running, nodeJob(0)]).filter((j) =>
        input.jobs.includes(j.jobId ?? ''),
      ),
    }));
    // CloudWatch: "start", then nothing new while running, then "end" as the job finishes, then nothing.
    const pages = [
      { events: events('start'), nextForwardToken: 'f/1' },
      { events: [], nextForwardToken: 'f/1' },
      { events: events('end'), nextForwardToken: 'f/2' },
    ];
    mocked.logs.on(GetLogEventsCommand).callsFake(() => {
      const page = pages.shift() ?? { events: [], nextForwardToken: 'f/2' };
      if (pages.length === 0) finishedYet = true;
      return page;
    });

    const lines: string[] = [];
    for await (const line of mocked.scheduler.logIter(APP_ID, {
      role: 'ps',
      tail: true,
      pollIntervalMs: 7,
    })) {
      lines.push(line);
    }
    expect(lines).toEqual(['start', 'end']);
    expect(polls).toEqual([7]);
  });
});
