/**
 * Reads CloudWatch Logs forward, one page at a time, across an ordered list of log streams (a replica's
 * attempts, a host's restarts). The schedulers decide which streams to read, how their page tokens are
 * encoded and bound to a query, when a log is finished, and how AWS errors are reported; this module does
 * the CloudWatch paging they share:
 *
 * - GetLogEvents with `startFromHead` and the forward token; a stream ends when CloudWatch hands back the
 *   token it was sent (its pages may be empty before that, so a page makes up to
 *   {@link MAX_LOG_CALLS_PER_PAGE} calls rather than answer an empty page that is not the end);
 * - at a stream's end, the next stream of the list; after the last one, caught up;
 * - `ResourceNotFoundException` means the stream does not exist (yet): nothing to read in it;
 * - `InvalidParameterException` on a call that carried a CloudWatch token means that token expired (they
 *   last 24 h) or was forged: {@link InvalidLogTokenError}.
 *
 * @module
 */
import {
  type CloudWatchLogsClient,
  GetLogEventsCommand,
  type GetLogEventsCommandInput,
  type OutputLogEvent,
} from '@aws-sdk/client-cloudwatch-logs';
import { InvalidLogTokenError } from './errors.js';
import { type LogPage, MAX_LOG_PAGE_SIZE, splitLines } from './logs.js';

/**
 * The client class, from the module a scheduler imports when it first reads a log: the client's code and
 * the paging come in one import, and a function that reads no log loads neither.
 */
export { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';

/** Most GetLogEvents calls one page makes before it answers (CloudWatch pages can be empty before a stream's end). */
export const MAX_LOG_CALLS_PER_PAGE = 10;

/**
 * A position in a list of log streams: the stream being read and CloudWatch's forward token within it.
 * No stream means "from the first stream of the list"; no token means "from the head of the stream".
 * Schedulers carry it inside their own opaque page tokens.
 */
export interface CloudWatchLogCursor {
  stream?: string;
  /** CloudWatch `nextForwardToken` within `stream`. */
  token?: string;
}

/**
 * Sends one CloudWatch Logs call with the scheduler's retries and error mapping (throwing the scheduler's
 * own errors). May resolve to undefined when the stream or group does not exist.
 *
 * @param action the CloudWatch Logs API action, `GetLogEvents`
 */
export type CloudWatchLogsCall = <T>(action: string, send: () => Promise<T>) => Promise<T | undefined>;

/** What {@link readLogStreams} reads. */
export interface ReadLogStreamsInput {
  client: CloudWatchLogsClient;
  logGroup: string;
  /**
   * The streams in reading order, or a function that lists them. The function is called at most once per
   * page, and only when needed: to find the first stream, or the one after a stream that has ended.
   */
  streams: readonly string[] | (() => Promise<readonly string[]>);
  /** Where the previous page stopped; the head of the first stream when absent. */
  cursor?: CloudWatchLogCursor | undefined;
  /** Most lines to read (1 to {@link MAX_LOG_PAGE_SIZE}; clamped). A multi-line event may overshoot it. */
  limit: number;
  /** Only events at or after this time (`startTime`). */
  since?: Date | undefined;
  /** Only events before this time (`endTime`, exclusive). */
  until?: Date | undefined;
  /**
   * True when nothing more will be written (the source finished, and late lines have had time to arrive).
   * Observe it before reading: a read that catches up after it has seen everything.
   */
  finished: boolean;
  /** Error mapping and retries around each call; the call is sent as is when omitted. */
  call?: CloudWatchLogsCall | undefined;
  /** Most GetLogEvents calls for this page; {@link MAX_LOG_CALLS_PER_PAGE} by default. */
  maxCalls?: number | undefined;
}

/** One page read by {@link readLogStreams}. */
export interface LogStreamsPage {
  /** The lines read, oldest first (an event's message split at newlines). */
  lines: string[];
  /** Where to continue from. */
  cursor: CloudWatchLogCursor;
  /** True when every line written so far has been read. */
  caughtUp: boolean;
  /** True when caught up with a finished source: nothing more will come, so no page token is due. */
  complete: boolean;
}

type GetLogEventsOutcome =
  | { kind: 'events'; events: OutputLogEvent[]; forwardToken: string | undefined }
  | { kind: 'stream-missing' }
  | { kind: 'token-rejected' };

function errorName(error: unknown): unknown {
  return error !== null && typeof error === 'object' ? (error as { name?: unknown }).name : undefined;
}

/** An event's lines; an event is at least one line (CloudWatch stores no empty message). */
function linesOf(message: string | undefined): string[] {
  if (message === undefined || message === '') return [''];
  return splitLines(message);
}

async function getLogEvents(
  input: ReadLogStreamsInput,
  stream: string,
  token: string | undefined,
  limit: number,
): Promise<GetLogEventsOutcome> {
  const params: GetLogEventsCommandInput = {
    logGroupName: input.logGroup,
    logStreamName: stream,
    startFromHead: true,
    limit,
  };
  if (token !== undefined) params.nextToken = token;
  if (input.since !== undefined) params.startTime = input.since.getTime();
  if (input.until !== undefined) params.endTime = input.until.getTime();
  const call: CloudWatchLogsCall = input.call ?? ((_action, send) => send());
  // The outcomes CloudWatch answers with an error are settled here, before the scheduler's error mapping.
  const outcome = await call('GetLogEvents', async (): Promise<GetLogEventsOutcome> => {
    try {
      const output = await input.client.send(new GetLogEventsCommand(params));
      return { kind: 'events', events: output.events ?? [], forwardToken: output.nextForwardToken };
    } catch (error) {
      // The stream appears when the program first writes; until then there is nothing to read in it.
      if (errorName(error) === 'ResourceNotFoundException') return { kind: 'stream-missing' };
      if (errorName(error) === 'InvalidParameterException' && token !== undefined) {
        return { kind: 'token-rejected' };
      }
      throw error;
    }
  });
  return outcome ?? { kind: 'stream-missing' };
}

/**
 * Reads one page forward from `cursor`: GetLogEvents from the head (`startFromHead`, forward tokens) until
 * `limit` lines, the end of what is written so far, or {@link MAX_LOG_CALLS_PER_PAGE} calls, moving on to
 * the next stream of the list whenever a stream ends. A page that got lines stops at the first call that
 * returned some, so pages stay small and fast.
 *
 * A stream has ended when CloudWatch returns the token it was sent, or when it does not exist (yet). When
 * the last stream has ended the page is caught up, and complete if the source is `finished`; the cursor
 * then stays at the last stream's end, so the next page reads what was written meanwhile.
 *
 * A cursor whose stream is not in the list is read to its end and then reports caught up: schedulers
 * validate that the streams their tokens name belong to the query.
 *
 * @throws InvalidLogTokenError when CloudWatch rejects the cursor's token (expired after 24 h, or forged).
 *   Other failures are whatever `call` makes of them.
 *
 * @example
 * ```ts
 * const page = await readLogStreams({
 *   client: new CloudWatchLogsClient({}),
 *   logGroup: '/aws/batch/job',
 *   streams: ['train/default/attempt-1', 'train/default/attempt-2'],
 *   cursor: decodedFromPageToken,          // undefined for the first page
 *   limit: 1000,
 *   finished: false,
 *   call: (action, send) => withErrorMapping(`logs:${action}`, send),
 * });
 * const logPage = toLogPage(page, (cursor) => encodeLogToken({ app, role, replica, ...cursor }));
 * ```
 */
export async function readLogStreams(input: ReadLogStreamsInput): Promise<LogStreamsPage> {
  const limit = Math.min(Math.max(Math.trunc(input.limit), 1), MAX_LOG_PAGE_SIZE);
  const maxCalls = input.maxCalls ?? MAX_LOG_CALLS_PER_PAGE;
  const lines: string[] = [];
  let stream = input.cursor?.stream;
  // A token means nothing without its stream.
  let token = stream === undefined ? undefined : input.cursor?.token;
  let listed: readonly string[] | undefined = typeof input.streams === 'function' ? undefined : input.streams;
  const streams = async (): Promise<readonly string[]> => {
    if (listed === undefined && typeof input.streams === 'function') listed = await input.streams();
    return listed ?? [];
  };
  const page = (caughtUp: boolean): LogStreamsPage => {
    const cursor: CloudWatchLogCursor = {};
    if (stream !== undefined) cursor.stream = stream;
    if (token !== undefined) cursor.token = token;
    return { lines, cursor, caughtUp, complete: caughtUp && input.finished };
  };

  for (let calls = 0; calls < maxCalls; calls++) {
    if (stream === undefined) {
      stream = (await streams())[0];
      if (stream === undefined) return page(true);
    }
    const read = await getLogEvents(input, stream, token, limit - lines.length);
    if (read.kind === 'token-rejected') throw new InvalidLogTokenError();
    if (read.kind === 'events') {
      for (const event of read.events) lines.push(...linesOf(event.message));
      if (read.forwardToken !== undefined && read.forwardToken !== token) {
        token = read.forwardToken;
        if (lines.length > 0) return page(false);
        continue;
      }
    }
    // The stream has ended (its token came back unchanged, or it does not exist): on to the next one.
    const list = await streams();
    const index = list.indexOf(stream);
    const following = index >= 0 ? list[index + 1] : undefined;
    if (following === undefined) return page(true);
    stream = following;
    token = undefined;
    if (lines.length >= limit) return page(false);
  }
  return page(false);
}

/**
 * The {@link LogPage} a scheduler answers for a page read by {@link readLogStreams}: the lines, caught up,
 * and a page token made by `encode` from the cursor unless the log is complete.
 *
 * @example
 * ```ts
 * return toLogPage(page, (cursor) => encodeLogToken({ v: 1, query, ...cursor }));
 * ```
 */
export function toLogPage(page: LogStreamsPage, encode: (cursor: CloudWatchLogCursor) => string): LogPage {
  if (page.complete) return { lines: page.lines, caughtUp: true };
  return { lines: page.lines, caughtUp: page.caughtUp, nextToken: encode(page.cursor) };
}
