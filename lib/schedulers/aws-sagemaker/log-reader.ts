/**
 * Reads a SageMaker training job's CloudWatch logs one page at a time. Each instance `algo-<k+1>` writes to
 * streams `<job>/algo-<k+1>-<epoch>` in `/aws/sagemaker/TrainingJobs`; a retried job gets a new stream per
 * attempt, so the streams of a host are read one after another, oldest first.
 *
 * @module
 */
import {
  type CloudWatchLogsClient,
  DescribeLogStreamsCommand,
  GetLogEventsCommand,
  type GetLogEventsCommandInput,
  type LogStream,
} from '@aws-sdk/client-cloudwatch-logs';
import { InvalidLogTokenError } from '../errors.js';
import {
  DEFAULT_LOG_PAGE_SIZE,
  decodeLogToken,
  encodeLogToken,
  type LogPage,
  type LogPageRequest,
  MAX_LOG_PAGE_SIZE,
  splitLines,
} from '../logs.js';

/** The log group SageMaker training jobs write to. */
export const SAGEMAKER_LOG_GROUP = '/aws/sagemaker/TrainingJobs';

/** Most CloudWatch calls one page may make (empty pages happen before a stream's end). */
export const MAX_LOG_CALLS_PER_PAGE = 10;

/** Position in the log, carried in the opaque page token. */
interface LogCursor {
  v: 1;
  /** The query the cursor belongs to. */
  q: string;
  /** Stream being read. */
  s?: string;
  /** CloudWatch forward token within `s`. */
  t?: string;
}

/** Runs a CloudWatch call with the scheduler's retry and error mapping. */
export type LogsCall = <T>(action: string, send: () => Promise<T>) => Promise<T | undefined>;

/** What {@link readSageMakerLogPage} needs. */
export interface SageMakerLogPageInput {
  logsClient: CloudWatchLogsClient;
  /**
   * Sends a call, retrying throttling and mapping errors; resolves to undefined when CloudWatch says the
   * group or stream does not exist.
   */
  call: LogsCall;
  jobName: string;
  /** Replica index (host `algo-<replica+1>`). */
  replica: number;
  /** True when the job is finished: once caught up, nothing more will come. */
  finished: boolean;
  request: LogPageRequest;
}

/** The stream-name prefix of one host of a job. */
export function logStreamPrefix(jobName: string, replica: number): string {
  return `${jobName}/algo-${replica + 1}-`;
}

function queryKey(input: SageMakerLogPageInput): string {
  const { request } = input;
  return JSON.stringify([
    input.jobName,
    request.role,
    input.replica,
    request.since?.getTime() ?? null,
    request.until?.getTime() ?? null,
  ]);
}

function decodeCursor(token: string | undefined, key: string): LogCursor {
  if (token === undefined) return { v: 1, q: key };
  const decoded = decodeLogToken(token);
  if (decoded === null || typeof decoded !== 'object') throw new InvalidLogTokenError();
  const cursor = decoded as Partial<LogCursor>;
  if (cursor.v !== 1 || cursor.q !== key) throw new InvalidLogTokenError();
  if (cursor.s !== undefined && typeof cursor.s !== 'string') throw new InvalidLogTokenError();
  if (cursor.t !== undefined && typeof cursor.t !== 'string') throw new InvalidLogTokenError();
  const result: LogCursor = { v: 1, q: key };
  if (cursor.s !== undefined) result.s = cursor.s;
  if (cursor.t !== undefined) result.t = cursor.t;
  return result;
}

async function listStreams(input: SageMakerLogPageInput): Promise<string[]> {
  const prefix = logStreamPrefix(input.jobName, input.replica);
  const streams: LogStream[] = [];
  let nextToken: string | undefined;
  do {
    const page = await input.call('logs:DescribeLogStreams', () =>
      input.logsClient.send(
        new DescribeLogStreamsCommand({
          logGroupName: SAGEMAKER_LOG_GROUP,
          logStreamNamePrefix: prefix,
          ...(nextToken === undefined ? {} : { nextToken }),
        }),
      ),
    );
    if (page === undefined) return [];
    streams.push(...(page.logStreams ?? []).filter((s) => s.logStreamName?.startsWith(prefix)));
    nextToken = page.nextToken;
  } while (nextToken !== undefined);
  return streams
    .sort(
      (a, b) =>
        (a.creationTime ?? 0) - (b.creationTime ?? 0) ||
        (a.logStreamName ?? '').localeCompare(b.logStreamName ?? ''),
    )
    .map((s) => s.logStreamName ?? '');
}

function linesOf(message: string | undefined): string[] {
  if (message === undefined || message === '') return [''];
  return splitLines(message);
}

/**
 * Reads one page: continues from `request.nextToken`, reads forward (oldest first) until `limit` lines or
 * the end of what is written so far, moving on to a host's later streams. `caughtUp` says everything
 * available was read; `nextToken` is absent only when the job is finished and everything was read.
 *
 * @throws InvalidLogTokenError for a token from another query.
 */
export async function readSageMakerLogPage(input: SageMakerLogPageInput): Promise<LogPage> {
  const { request } = input;
  const key = queryKey(input);
  let cursor = decodeCursor(request.nextToken, key);
  const limit = Math.min(Math.max(Math.trunc(request.limit ?? DEFAULT_LOG_PAGE_SIZE), 1), MAX_LOG_PAGE_SIZE);
  const lines: string[] = [];
  let streams: string[] | undefined;
  const token = () => encodeLogToken(cursor);
  const caughtUp = (): LogPage =>
    input.finished ? { lines, caughtUp: true } : { lines, caughtUp: true, nextToken: token() };

  for (let calls = 0; calls < MAX_LOG_CALLS_PER_PAGE; calls++) {
    if (cursor.s === undefined) {
      streams ??= await listStreams(input);
      const first = streams[0];
      if (first === undefined) return caughtUp();
      cursor = { v: 1, q: key, s: first };
    }
    const params: GetLogEventsCommandInput = {
      logGroupName: SAGEMAKER_LOG_GROUP,
      logStreamName: cursor.s,
      startFromHead: true,
      limit: limit - lines.length,
    };
    if (cursor.t !== undefined) params.nextToken = cursor.t;
    if (request.since !== undefined) params.startTime = request.since.getTime();
    if (request.until !== undefined) params.endTime = request.until.getTime();
    const page = await input.call('logs:GetLogEvents', () =>
      input.logsClient.send(new GetLogEventsCommand(params)),
    );
    for (const event of page?.events ?? []) lines.push(...linesOf(event.message));
    const next = page?.nextForwardToken;
    if (next !== undefined && next !== cursor.t) {
      cursor = { ...cursor, t: next };
      if (lines.length > 0) return { lines, caughtUp: false, nextToken: token() };
      continue;
    }
    // End of this stream (the token came back unchanged): go on with the host's next stream, if any.
    streams ??= await listStreams(input);
    const index = streams.indexOf(cursor.s ?? '');
    const following = index >= 0 ? streams[index + 1] : undefined;
    if (following === undefined) return caughtUp();
    cursor = { v: 1, q: key, s: following };
    if (lines.length >= limit) return { lines, caughtUp: false, nextToken: token() };
  }
  return { lines, caughtUp: false, nextToken: token() };
}
