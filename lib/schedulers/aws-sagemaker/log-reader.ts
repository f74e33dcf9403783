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
  type LogStream,
} from '@aws-sdk/client-cloudwatch-logs';
import { readLogStreams, toLogPage } from '../cloudwatch-logs.js';
import { InvalidLogTokenError } from '../errors.js';
import {
  DEFAULT_LOG_PAGE_SIZE,
  decodeLogToken,
  encodeLogToken,
  type LogPage,
  type LogPageRequest,
} from '../logs.js';

/** The log group SageMaker training jobs write to. */
export const SAGEMAKER_LOG_GROUP = '/aws/sagemaker/TrainingJobs';

/**
 * Position in the log, carried in the opaque page token: the shared reader's cursor (`s` = stream, `t` =
 * CloudWatch forward token) bound to the query.
 */
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

function decodeCursor(token: string | undefined, key: string, streamPrefix: string): LogCursor {
  if (token === undefined) return { v: 1, q: key };
  const decoded = decodeLogToken(token);
  if (decoded === null || typeof decoded !== 'object') throw new InvalidLogTokenError();
  const cursor = decoded as Partial<LogCursor>;
  if (cursor.v !== 1 || cursor.q !== key) throw new InvalidLogTokenError();
  // The stream must be one of this host's: a token cannot lead to another job's log.
  if (cursor.s !== undefined && (typeof cursor.s !== 'string' || !cursor.s.startsWith(streamPrefix))) {
    throw new InvalidLogTokenError();
  }
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

/**
 * Reads one page: continues from `request.nextToken`, reads forward (oldest first) until `limit` lines or
 * the end of what is written so far, moving on to a host's later streams (the shared
 * {@link readLogStreams}). `caughtUp` says everything available was read; `nextToken` is absent only when
 * the job is finished and everything was read.
 *
 * @throws InvalidLogTokenError for a token from another query, or one CloudWatch no longer accepts.
 */
export async function readSageMakerLogPage(input: SageMakerLogPageInput): Promise<LogPage> {
  const { request } = input;
  const key = queryKey(input);
  const cursor = decodeCursor(request.nextToken, key, logStreamPrefix(input.jobName, input.replica));
  const page = await readLogStreams({
    client: input.logsClient,
    logGroup: SAGEMAKER_LOG_GROUP,
    streams: () => listStreams(input),
    cursor: { stream: cursor.s, token: cursor.t },
    limit: request.limit ?? DEFAULT_LOG_PAGE_SIZE,
    since: request.since,
    until: request.until,
    finished: input.finished,
    call: (action, send) => input.call(`logs:${action}`, send),
  });
  return toLogPage(page, ({ stream, token }) => {
    const next: LogCursor = { v: 1, q: key };
    if (stream !== undefined) next.s = stream;
    if (token !== undefined) next.t = token;
    return encodeLogToken(next);
  });
}
