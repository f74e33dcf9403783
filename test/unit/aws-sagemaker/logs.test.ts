import {
  AccessDeniedException,
  CloudWatchLogsClient,
  DescribeLogStreamsCommand,
  type DescribeLogStreamsCommandInput,
  GetLogEventsCommand,
  type GetLogEventsCommandInput,
  InvalidParameterException,
  ResourceNotFoundException,
  ThrottlingException,
} from '@aws-sdk/client-cloudwatch-logs';
import { DescribeTrainingJobCommand, SageMakerClient } from '@aws-sdk/client-sagemaker';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import 'aws-sdk-client-mock-vitest/extend';
import type { AwsSageMakerScheduler } from '../../../lib/schedulers/aws-sagemaker/index.js';
import {
  BackendAccessDeniedError,
  decodeLogToken,
  encodeLogToken,
  InvalidLogTokenError,
  type LogPage,
  UnknownReplicaError,
  UnknownRoleError,
} from '../../../lib/schedulers/index.js';
import { compileLogFilter } from '../../../lib/schedulers/log-filter.js';
import { UnknownAppError, ValidationError } from '../../../lib/specs/index.js';
import { describedJob, makeScheduler, sageMakerError } from './helpers.js';

const sageMakerClient = new SageMakerClient({});
const logsClient = new CloudWatchLogsClient({});
const sageMaker = mockClient(sageMakerClient);
const logs = mockClient(logsClient);
let scheduler: AwsSageMakerScheduler;

const JOB = 'train-t4rcs9x6sv1m';
const GROUP = '/aws/sagemaker/TrainingJobs';

interface FakeEvent {
  timestamp: number;
  message: string;
}

/**
 * CloudWatch Logs as seen through DescribeLogStreams and GetLogEvents (startFromHead): the forward token
 * is the position after the returned events, and it comes back unchanged at the end of the stream.
 */
function fakeCloudWatch(streams: Record<string, FakeEvent[]>, creation: Record<string, number> = {}) {
  logs.on(DescribeLogStreamsCommand).callsFake((input: DescribeLogStreamsCommandInput) => ({
    logStreams: Object.keys(streams)
      .filter((name) => name.startsWith(input.logStreamNamePrefix ?? ''))
      .map((name) => ({
        logStreamName: name,
        creationTime: creation[name] ?? 0,
        arn: `arn:aws:logs:us-east-1:123456789012:log-group:${GROUP}:log-stream:${name}`,
        storedBytes: 0,
      })),
  }));
  logs.on(GetLogEventsCommand).callsFake((input: GetLogEventsCommandInput) => {
    const all = (streams[input.logStreamName ?? ''] ?? []).filter(
      (e) =>
        (input.startTime === undefined || e.timestamp >= input.startTime) &&
        (input.endTime === undefined || e.timestamp < input.endTime),
    );
    const start = input.nextToken === undefined ? 0 : Number(input.nextToken.split('/').pop());
    const page = all.slice(start, start + (input.limit ?? 10_000));
    return {
      events: page.map((e) => ({ ...e, ingestionTime: e.timestamp + 5 })),
      nextForwardToken: `f/${input.logStreamName}/${start + page.length}`,
      nextBackwardToken: `b/${input.logStreamName}/${start}`,
    };
  });
}

const events = (prefix: string, n: number, from = 1_000): FakeEvent[] =>
  Array.from({ length: n }, (_, i) => ({ timestamp: from + i, message: `${prefix} ${i}` }));

async function readAll(request: Parameters<AwsSageMakerScheduler['readLogs']>[1]): Promise<LogPage[]> {
  const pages: LogPage[] = [];
  let nextToken: string | undefined;
  for (let i = 0; i < 20; i++) {
    const page = await scheduler.readLogs(JOB, nextToken === undefined ? request : { ...request, nextToken });
    pages.push(page);
    if (page.nextToken === undefined || page.caughtUp) break;
    nextToken = page.nextToken;
  }
  return pages;
}

beforeEach(() => {
  sageMaker.reset();
  logs.reset();
  scheduler = makeScheduler({ sageMakerClient, logsClient, now: 1_735_800_000_000 });
});

describe('AwsSageMakerScheduler logs', () => {
  it("reads a host's streams oldest first (one per attempt) and ends once a finished job is read", async () => {
    sageMaker
      .on(DescribeTrainingJobCommand)
      .resolves(describedJob({ TrainingJobStatus: 'Completed', SecondaryStatus: 'Completed' }));
    fakeCloudWatch(
      {
        [`${JOB}/algo-2-1735740500`]: events('second attempt', 2, 5_000),
        [`${JOB}/algo-2-1735740100`]: events('first attempt', 3),
        [`${JOB}/algo-1-1735740100`]: events('other host', 4),
      },
      { [`${JOB}/algo-2-1735740500`]: 1735740500_000, [`${JOB}/algo-2-1735740100`]: 1735740100_000 },
    );
    const pages = await readAll({ role: 'trainer', replica: 1 });
    expect(pages.flatMap((p) => p.lines)).toStrictEqual([
      'first attempt 0',
      'first attempt 1',
      'first attempt 2',
      'second attempt 0',
      'second attempt 1',
    ]);
    const last = pages[pages.length - 1];
    expect(last?.caughtUp).toBe(true);
    expect(last?.nextToken).toBeUndefined();
    expect(logs).toHaveReceivedCommandWith(DescribeLogStreamsCommand, {
      logGroupName: GROUP,
      logStreamNamePrefix: `${JOB}/algo-2-`,
    });
    expect(logs).toHaveReceivedCommandWith(GetLogEventsCommand, {
      logGroupName: GROUP,
      logStreamName: `${JOB}/algo-2-1735740100`,
      startFromHead: true,
    });
  });

  it('returns a token to poll again once caught up with a running job, and continues from it', async () => {
    sageMaker.on(DescribeTrainingJobCommand).resolves(describedJob());
    const stream: FakeEvent[] = events('line', 2);
    fakeCloudWatch({ [`${JOB}/algo-1-1735740100`]: stream });
    const first = await readAll({ role: 'trainer' });
    const caughtUp = first[first.length - 1]!;
    expect(first.flatMap((p) => p.lines)).toStrictEqual(['line 0', 'line 1']);
    expect(caughtUp.caughtUp).toBe(true);
    expect(caughtUp.nextToken).toBeDefined();

    stream.push({ timestamp: 2_000, message: 'line 2' });
    const more = await scheduler.readLogs(JOB, { role: 'trainer', nextToken: caughtUp.nextToken! });
    expect(more.lines).toStrictEqual(['line 2']);
  });

  it('answers an empty caught-up page with a token before the first stream exists', async () => {
    sageMaker.on(DescribeTrainingJobCommand).resolves(describedJob({ SecondaryStatus: 'Starting' }));
    fakeCloudWatch({});
    const page = await scheduler.readLogs(JOB, { role: 'trainer' });
    expect(page.lines).toStrictEqual([]);
    expect(page.caughtUp).toBe(true);
    expect(page.nextToken).toEqual(expect.any(String));
  });

  it('treats a missing log group as no stream yet', async () => {
    sageMaker.on(DescribeTrainingJobCommand).resolves(describedJob());
    logs
      .on(DescribeLogStreamsCommand)
      .rejects(
        new ResourceNotFoundException({ message: 'The specified log group does not exist.', $metadata: {} }),
      );
    const page = await scheduler.readLogs(JOB, { role: 'trainer' });
    expect([page.lines, page.caughtUp, typeof page.nextToken]).toStrictEqual([[], true, 'string']);
  });

  it('ends without a token when a finished job never wrote a stream', async () => {
    sageMaker.on(DescribeTrainingJobCommand).resolves(
      describedJob({
        TrainingJobStatus: 'Failed',
        SecondaryStatus: 'Failed',
        FailureReason: 'CapacityError',
      }),
    );
    fakeCloudWatch({});
    await expect(scheduler.readLogs(JOB, { role: 'trainer' })).resolves.toStrictEqual({
      lines: [],
      caughtUp: true,
    });
  });

  it('passes since and until as startTime and endTime, and keeps pages within the limit', async () => {
    sageMaker.on(DescribeTrainingJobCommand).resolves(describedJob());
    fakeCloudWatch({ [`${JOB}/algo-1-1735740100`]: events('l', 10) });
    const request = { role: 'trainer', since: new Date(1_002), until: new Date(1_008), limit: 4 };
    const first = await scheduler.readLogs(JOB, request);
    expect(first).toMatchObject({ lines: ['l 2', 'l 3', 'l 4', 'l 5'], caughtUp: false });
    expect(logs).toHaveReceivedCommandWith(GetLogEventsCommand, {
      startTime: 1_002,
      endTime: 1_008,
      limit: 4,
    });
    const second = await scheduler.readLogs(JOB, { ...request, nextToken: first.nextToken! });
    expect(second.lines).toStrictEqual(['l 6', 'l 7']);
  });

  it('splits multi-line events and filters with the regex', async () => {
    sageMaker.on(DescribeTrainingJobCommand).resolves(describedJob());
    fakeCloudWatch({
      [`${JOB}/algo-1-1735740100`]: [
        { timestamp: 1, message: 'epoch 1 loss=0.5\nepoch 1 acc=0.7\n' },
        { timestamp: 2, message: 'epoch 2 loss=0.4' },
      ],
    });
    const pages = await readAll({ role: 'trainer', filter: compileLogFilter('loss=') });
    expect(pages.flatMap((p) => p.lines)).toStrictEqual(['epoch 1 loss=0.5', 'epoch 2 loss=0.4']);
  });

  it('rejects an unknown role, a replica out of range, an unknown app and separate streams', async () => {
    sageMaker
      .on(DescribeTrainingJobCommand, { TrainingJobName: JOB })
      .resolves(describedJob())
      .on(DescribeTrainingJobCommand, { TrainingJobName: 'nope-b' })
      .rejects(sageMakerError('ValidationException', 'Requested resource not found.'));
    await expect(scheduler.readLogs(JOB, { role: 'ps' })).rejects.toThrow(UnknownRoleError);
    await expect(scheduler.readLogs(JOB, { role: 'trainer', replica: 2 })).rejects.toThrow(
      UnknownReplicaError,
    );
    await expect(scheduler.readLogs(JOB, { role: 'trainer', replica: 2 })).rejects.toThrow(
      "role 'trainer' has 2 replica(s) (0..1); replica 2 does not exist",
    );
    await expect(scheduler.readLogs('nope-b', { role: 'trainer' })).rejects.toThrow(UnknownAppError);
    await expect(scheduler.readLogs(JOB, { role: 'trainer', streams: 'stderr' })).rejects.toThrow(
      ValidationError,
    );
    expect(logs).not.toHaveReceivedAnyCommand();
  });

  it('rejects a token that is not ours or belongs to another query', async () => {
    sageMaker.on(DescribeTrainingJobCommand).resolves(describedJob());
    fakeCloudWatch({ [`${JOB}/algo-1-1735740100`]: events('l', 3) });
    await expect(scheduler.readLogs(JOB, { role: 'trainer', nextToken: 'garbage' })).rejects.toThrow(
      InvalidLogTokenError,
    );
    const page = await scheduler.readLogs(JOB, { role: 'trainer', limit: 1 });
    await expect(
      scheduler.readLogs(JOB, { role: 'trainer', replica: 1, nextToken: page.nextToken! }),
    ).rejects.toThrow(InvalidLogTokenError);
  });

  it("rejects a token whose stream is not this host's, before reading it", async () => {
    sageMaker.on(DescribeTrainingJobCommand).resolves(describedJob());
    fakeCloudWatch({ [`${JOB}/algo-1-1735740100`]: events('l', 3), 'other-job/algo-1-1735740100': [] });
    const page = await scheduler.readLogs(JOB, { role: 'trainer', limit: 1 });
    const forged = encodeLogToken({
      ...(decodeLogToken(page.nextToken!) as object),
      s: 'other-job/algo-1-1735740100',
    });
    await expect(scheduler.readLogs(JOB, { role: 'trainer', nextToken: forged })).rejects.toThrow(
      InvalidLogTokenError,
    );
    expect(logs).toHaveReceivedCommandTimes(GetLogEventsCommand, 1);
  });

  it('reports a CloudWatch token that has expired as an invalid token', async () => {
    sageMaker.on(DescribeTrainingJobCommand).resolves(describedJob());
    fakeCloudWatch({ [`${JOB}/algo-1-1735740100`]: events('l', 3) });
    const page = await scheduler.readLogs(JOB, { role: 'trainer', limit: 1 });
    logs
      .on(GetLogEventsCommand)
      .rejects(
        new InvalidParameterException({ message: 'The specified nextToken is invalid.', $metadata: {} }),
      );
    await expect(scheduler.readLogs(JOB, { role: 'trainer', nextToken: page.nextToken! })).rejects.toThrow(
      InvalidLogTokenError,
    );
  });

  it('retries throttled reads and names logs:GetLogEvents when access is denied', async () => {
    sageMaker.on(DescribeTrainingJobCommand).resolves(describedJob());
    fakeCloudWatch({ [`${JOB}/algo-1-1735740100`]: events('l', 1) });
    logs
      .on(GetLogEventsCommand)
      .rejectsOnce(new ThrottlingException({ message: 'Rate exceeded', $metadata: {} }))
      .resolves({ events: [{ timestamp: 1, message: 'after retry' }], nextForwardToken: 'f/1' });
    expect((await scheduler.readLogs(JOB, { role: 'trainer' })).lines).toStrictEqual(['after retry']);

    logs
      .on(GetLogEventsCommand)
      .rejects(new AccessDeniedException({ message: 'not authorized', $metadata: {} }));
    const error = await scheduler.readLogs(JOB, { role: 'trainer' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BackendAccessDeniedError);
    expect((error as Error).message).toMatch(
      /^Access denied to logs:GetLogEvents for the logs of training job/,
    );
  });

  it('tails a log until the job finishes (logIter)', async () => {
    const stream: FakeEvent[] = events('l', 1);
    sageMaker
      .on(DescribeTrainingJobCommand)
      .callsFake(() =>
        stream.length < 3 ? describedJob() : describedJob({ TrainingJobStatus: 'Completed' }),
      );
    fakeCloudWatch({ [`${JOB}/algo-1-1735740100`]: stream });
    const lines: string[] = [];
    for await (const line of scheduler.logIter(JOB, { role: 'trainer', tail: true, pollIntervalMs: 0 })) {
      lines.push(line);
      if (stream.length < 3) stream.push({ timestamp: 2_000 + stream.length, message: `l ${stream.length}` });
    }
    expect(lines).toStrictEqual(['l 0', 'l 1', 'l 2']);
  });
});
