import {
  AccessDeniedException,
  CloudWatchLogsClient,
  GetLogEventsCommand,
  type GetLogEventsCommandInput,
  InvalidParameterException,
  ResourceNotFoundException,
} from '@aws-sdk/client-cloudwatch-logs';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import 'aws-sdk-client-mock-vitest/extend';
import {
  type CloudWatchLogCursor,
  type CloudWatchLogsCall,
  type LogStreamsPage,
  MAX_LOG_CALLS_PER_PAGE,
  type ReadLogStreamsInput,
  readLogStreams,
  toLogPage,
} from '../../../lib/schedulers/cloudwatch-logs.js';
import { BackendAccessDeniedError, InvalidLogTokenError } from '../../../lib/schedulers/errors.js';

const client = new CloudWatchLogsClient({ region: 'us-east-1' });
const logs = mockClient(client);
const GROUP = '/aws/batch/job';

interface FakeEvent {
  timestamp: number;
  message: string;
}

/** A stream as CloudWatch pages it: chunks of events, where an empty chunk is an empty page before the end. */
type FakeStream = FakeEvent[][];

/**
 * GetLogEvents with `startFromHead` as CloudWatch answers it: the forward token is the position after the
 * returned events; empty pages (with a new token) can come before the end; at the end the token sent comes
 * back unchanged; a token from another stream, or garbage, is an InvalidParameterException; an unknown
 * stream is a ResourceNotFoundException.
 */
function fakeCloudWatch(streams: Record<string, FakeStream>) {
  logs.on(GetLogEventsCommand).callsFake((input: GetLogEventsCommandInput) => {
    const name = input.logStreamName ?? '';
    const stream = streams[name];
    if (stream === undefined) {
      throw new ResourceNotFoundException({
        message: 'The specified log stream does not exist.',
        $metadata: {},
      });
    }
    let chunk = 0;
    let offset = 0;
    if (input.nextToken !== undefined) {
      const match = /^f\/(.+)\/(\d+)\/(\d+)$/.exec(input.nextToken);
      if (match === null || match[1] !== name) {
        throw new InvalidParameterException({
          message: 'The specified nextToken is invalid.',
          $metadata: {},
        });
      }
      chunk = Number(match[2]);
      offset = Number(match[3]);
    }
    const inWindow = (e: FakeEvent) =>
      (input.startTime === undefined || e.timestamp >= input.startTime) &&
      (input.endTime === undefined || e.timestamp < input.endTime);
    // CloudWatch applies the time window before paging.
    const current = stream[chunk]?.filter(inWindow);
    if (current === undefined || (chunk === stream.length - 1 && offset >= current.length)) {
      return { events: [], nextForwardToken: `f/${name}/${chunk}/${offset}`, nextBackwardToken: 'b/0' };
    }
    const taken = current.slice(offset, offset + (input.limit ?? 10_000));
    const end = offset + taken.length;
    const next = end >= current.length && chunk < stream.length - 1 ? `${chunk + 1}/0` : `${chunk}/${end}`;
    return {
      events: taken.map((e) => ({ ...e, ingestionTime: e.timestamp + 5 })),
      nextForwardToken: `f/${name}/${next}`,
      nextBackwardToken: 'b/0',
    };
  });
}

const lines = (prefix: string, n: number, from = 1_000): FakeEvent[] =>
  Array.from({ length: n }, (_, i) => ({ timestamp: from + i, message: `${prefix} ${i}` }));

function read(overrides: Partial<ReadLogStreamsInput> = {}): Promise<LogStreamsPage> {
  return readLogStreams({
    client,
    logGroup: GROUP,
    streams: ['a'],
    limit: 1_000,
    finished: false,
    ...overrides,
  });
}

/** Reads page after page (as a client following page tokens) until caught up; every line, in order. */
async function readToEnd(
  overrides: Partial<ReadLogStreamsInput>,
): Promise<{ lines: string[]; pages: number }> {
  const all: string[] = [];
  let cursor: CloudWatchLogCursor | undefined;
  for (let pages = 1; pages <= 50; pages++) {
    const page = await read({ ...overrides, cursor });
    all.push(...page.lines);
    if (page.caughtUp) return { lines: all, pages };
    cursor = page.cursor;
  }
  throw new Error('never caught up');
}

beforeEach(() => {
  logs.reset();
});

describe('readLogStreams', () => {
  it('reads a stream from the head with the forward token, in the given group, window and limit', async () => {
    fakeCloudWatch({ a: [lines('l', 10)] });
    const page = await read({ limit: 4, since: new Date(1_002), until: new Date(1_008) });
    expect(page).toStrictEqual({
      lines: ['l 2', 'l 3', 'l 4', 'l 5'],
      cursor: { stream: 'a', token: 'f/a/0/4' },
      caughtUp: false,
      complete: false,
    });
    expect(logs).toHaveReceivedCommandExactlyOnceWith(GetLogEventsCommand, {
      logGroupName: GROUP,
      logStreamName: 'a',
      startFromHead: true,
      limit: 4,
      startTime: 1_002,
      endTime: 1_008,
    });
    const next = await read({
      limit: 4,
      since: new Date(1_002),
      until: new Date(1_008),
      cursor: page.cursor,
    });
    expect(next.lines).toStrictEqual(['l 6', 'l 7']);
    expect(logs).toHaveReceivedNthCommandWith(GetLogEventsCommand, 2, { nextToken: 'f/a/0/4' });
  });

  it('reads past the empty pages CloudWatch answers before the end of a stream', async () => {
    fakeCloudWatch({ a: [[], [], lines('l', 2)] });
    const page = await read();
    expect(page.lines).toStrictEqual(['l 0', 'l 1']);
    expect(logs).toHaveReceivedCommandTimes(GetLogEventsCommand, 3);
  });

  it('is caught up when CloudWatch hands back the token it was sent, and reads later lines from there', async () => {
    const stream = lines('l', 2);
    fakeCloudWatch({ a: [stream] });
    const first = await read();
    const caughtUp = await read({ cursor: first.cursor });
    expect(caughtUp).toStrictEqual({
      lines: [],
      cursor: { stream: 'a', token: 'f/a/0/2' },
      caughtUp: true,
      complete: false,
    });

    stream.push({ timestamp: 2_000, message: 'late' });
    expect((await read({ cursor: caughtUp.cursor })).lines).toStrictEqual(['late']);
  });

  it('is complete once caught up with a finished source, and not before', async () => {
    fakeCloudWatch({ a: [lines('l', 1)] });
    const first = await read({ finished: true });
    expect([first.caughtUp, first.complete]).toStrictEqual([false, false]);
    const last = await read({ finished: true, cursor: first.cursor });
    expect([last.caughtUp, last.complete]).toStrictEqual([true, true]);
  });

  it('moves on to the next stream when one ends, within the same page', async () => {
    fakeCloudWatch({ a: [lines('a', 2)], b: [[], lines('b', 2)], c: [lines('c', 1)] });
    const first = await read({ streams: ['a', 'b', 'c'] });
    const second = await read({ streams: ['a', 'b', 'c'], cursor: first.cursor });
    expect(first.lines).toStrictEqual(['a 0', 'a 1']);
    expect(second.lines).toStrictEqual(['b 0', 'b 1']);
    expect(second.cursor.stream).toBe('b');
    expect(logs).toHaveReceivedNthCommandWith(GetLogEventsCommand, 3, { logStreamName: 'b' });
    const third = await read({ streams: ['a', 'b', 'c'], cursor: second.cursor });
    expect(third.lines).toStrictEqual(['c 0']);
  });

  it('reads every line of several streams exactly once, page by page, with small pages', async () => {
    fakeCloudWatch({
      first: [lines('first', 5), [], lines('first more', 4, 2_000)],
      empty: [[]],
      second: [[], [], lines('second', 7, 3_000)],
    });
    const { lines: all } = await readToEnd({ streams: ['first', 'empty', 'second'], limit: 3 });
    expect(all).toStrictEqual([
      ...lines('first', 5).map((e) => e.message),
      ...lines('first more', 4).map((e) => e.message),
      ...lines('second', 7).map((e) => e.message),
    ]);
  });

  it(`answers after ${MAX_LOG_CALLS_PER_PAGE} calls, not caught up, with a cursor past the empty pages`, async () => {
    fakeCloudWatch({ a: [...Array.from({ length: 15 }, () => []), lines('l', 1)] });
    const first = await read();
    expect(first).toMatchObject({ lines: [], caughtUp: false, complete: false });
    expect(logs).toHaveReceivedCommandTimes(GetLogEventsCommand, MAX_LOG_CALLS_PER_PAGE);
    const second = await read({ cursor: first.cursor });
    expect(second.lines).toStrictEqual(['l 0']);
  });

  it("starts the next stream from its head, with what is left of the page's limit", async () => {
    fakeCloudWatch({ a: [lines('a', 2)], b: [lines('b', 1)] });
    const first = await read({ streams: ['a', 'b'], limit: 2 });
    const endOfA = await read({ streams: ['a', 'b'], limit: 2, cursor: first.cursor });
    expect(endOfA.lines).toStrictEqual(['b 0']);
    expect(logs).toHaveReceivedLastCommandWith(GetLogEventsCommand, { logStreamName: 'b', limit: 2 });
    expect(logs.commandCalls(GetLogEventsCommand).at(-1)?.args[0].input.nextToken).toBeUndefined();
  });

  it('splits multi-line events into lines and keeps an empty line', async () => {
    fakeCloudWatch({
      a: [
        [
          { timestamp: 1, message: 'epoch 1\r\nloss=0.5\n' },
          { timestamp: 2, message: '\n' },
          { timestamp: 3, message: 'done' },
        ],
      ],
    });
    expect((await read()).lines).toStrictEqual(['epoch 1', 'loss=0.5', '', 'done']);
  });

  it('is caught up without any call when there is no stream yet', async () => {
    fakeCloudWatch({});
    expect(await read({ streams: [] })).toStrictEqual({
      lines: [],
      cursor: {},
      caughtUp: true,
      complete: false,
    });
    expect((await read({ streams: [], finished: true })).complete).toBe(true);
    expect(logs).toHaveReceivedCommandTimes(GetLogEventsCommand, 0);
  });

  it('lists lazily: only to find the first stream or the one after a stream that ended, once per page', async () => {
    fakeCloudWatch({ a: [lines('a', 1)], b: [lines('b', 1)] });
    let listings = 0;
    const streams = async () => {
      listings++;
      return ['a', 'b'];
    };
    const first = await read({ streams });
    expect([first.lines, listings]).toStrictEqual([['a 0'], 1]);
    const second = await read({ streams, cursor: first.cursor });
    expect([second.lines, listings]).toStrictEqual([['b 0'], 2]);
    const third = await read({ streams, cursor: { stream: 'b' } });
    expect([third.lines, listings]).toStrictEqual([['b 0'], 2]);

    fakeCloudWatch({ a: [[]], b: [lines('b', 1)] });
    listings = 0;
    const acrossAnEmptyStream = await read({ streams });
    expect([acrossAnEmptyStream.lines, listings]).toStrictEqual([['b 0'], 1]);
  });

  it('treats a stream CloudWatch does not have as empty and goes on to the next', async () => {
    fakeCloudWatch({ b: [lines('b', 1)] });
    const page = await read({ streams: ['missing', 'b'] });
    expect(page.lines).toStrictEqual(['b 0']);
    const onlyMissing = await read({ streams: ['missing'] });
    expect(onlyMissing).toStrictEqual({
      lines: [],
      cursor: { stream: 'missing' },
      caughtUp: true,
      complete: false,
    });
  });

  it('rejects a CloudWatch token CloudWatch no longer accepts as an invalid page token', async () => {
    fakeCloudWatch({ a: [lines('a', 1)] });
    await expect(read({ cursor: { stream: 'a', token: 'expired' } })).rejects.toThrow(InvalidLogTokenError);
  });

  it("leaves every other error to the scheduler's call, which it names GetLogEvents", async () => {
    logs
      .on(GetLogEventsCommand)
      .rejects(new AccessDeniedException({ message: 'not authorized', $metadata: {} }));
    const actions: string[] = [];
    const call: CloudWatchLogsCall = async (action, send) => {
      actions.push(action);
      try {
        return await send();
      } catch (error) {
        throw new BackendAccessDeniedError(`denied logs:${action}`, { cause: error });
      }
    };
    await expect(read({ call })).rejects.toThrow('denied logs:GetLogEvents');
    expect(actions).toStrictEqual(['GetLogEvents']);

    logs
      .on(GetLogEventsCommand)
      .rejects(new InvalidParameterException({ message: 'bad group name', $metadata: {} }));
    await expect(read()).rejects.toBeInstanceOf(InvalidParameterException);
  });

  it('treats a call that resolves to nothing (the scheduler saw "not found") as a missing stream', async () => {
    fakeCloudWatch({ a: [lines('a', 1)] });
    const page = await read({ call: async () => undefined });
    expect(page).toMatchObject({ lines: [], caughtUp: true, cursor: { stream: 'a' } });
  });

  it('drops a token that comes without its stream and starts from the first stream', async () => {
    fakeCloudWatch({ a: [lines('a', 1)] });
    expect((await read({ cursor: { token: 'f/a/0/1' } })).lines).toStrictEqual(['a 0']);
    expect(logs.commandCalls(GetLogEventsCommand)[0]?.args[0].input.nextToken).toBeUndefined();
  });
});

describe('toLogPage', () => {
  const encode = (cursor: CloudWatchLogCursor) => JSON.stringify(cursor);

  it('gives a page token unless the log is complete', () => {
    const cursor = { stream: 'a', token: 'f/1' };
    expect(toLogPage({ lines: ['x'], cursor, caughtUp: false, complete: false }, encode)).toStrictEqual({
      lines: ['x'],
      caughtUp: false,
      nextToken: '{"stream":"a","token":"f/1"}',
    });
    expect(toLogPage({ lines: [], cursor, caughtUp: true, complete: false }, encode)).toStrictEqual({
      lines: [],
      caughtUp: true,
      nextToken: '{"stream":"a","token":"f/1"}',
    });
    expect(toLogPage({ lines: ['y'], cursor, caughtUp: true, complete: true }, encode)).toStrictEqual({
      lines: ['y'],
      caughtUp: true,
    });
  });
});
