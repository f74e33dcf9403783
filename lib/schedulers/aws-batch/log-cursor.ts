/**
 * The page token of `aws_batch` logs: which job, role, replica and node it reads, and where in which
 * CloudWatch stream it stopped; and the streams of a node job's attempts.
 *
 * @module
 */
import type { JobDetail } from '@aws-sdk/client-batch';
import type { CloudWatchLogCursor } from '../cloudwatch-logs.js';
import { replicaLogStreamOf } from './task-containers.js';

/**
 * The log position a page token carries: the job, role and replica it is for, the stream and CloudWatch token
 * (the fields of the shared {@link CloudWatchLogCursor}, under the names earlier tokens used).
 */
export interface LogCursor {
  v: 1;
  /** Parent job id. */
  job: string;
  role: string;
  replica: number;
  /** Global node index of the replica. */
  node: number;
  stream?: string;
  cw?: string;
}

/** True when a decoded page token has the shape of a {@link LogCursor}. */
export function isLogCursor(value: unknown): value is LogCursor {
  if (value === null || typeof value !== 'object') return false;
  const c = value as Record<string, unknown>;
  return (
    c.v === 1 &&
    typeof c.job === 'string' &&
    typeof c.role === 'string' &&
    typeof c.replica === 'number' &&
    typeof c.node === 'number' &&
    (c.stream === undefined || typeof c.stream === 'string') &&
    (c.cw === undefined || typeof c.cw === 'string')
  );
}

/** The page token's position: `position` at the shared reader's cursor. */
export function positionAt(position: LogCursor, at: CloudWatchLogCursor): LogCursor {
  const cursor: LogCursor = { ...position };
  if (at.stream !== undefined) cursor.stream = at.stream;
  if (at.token !== undefined) cursor.cw = at.token;
  return cursor;
}

/**
 * The log streams of a node job's role container, oldest first: one per finished attempt, then the running
 * attempt's (in a workspace, the main container's; the fetch container's only for an attempt whose fetch
 * failed, see {@link replicaLogStreamOf}).
 */
export function streamsOf(node: JobDetail | undefined): string[] {
  const streams: string[] = [];
  for (const attempt of node?.attempts ?? []) {
    const name = replicaLogStreamOf(attempt);
    if (name && !streams.includes(name)) streams.push(name);
  }
  const current = node === undefined ? undefined : replicaLogStreamOf(node);
  if (current && !streams.includes(current)) streams.push(current);
  return streams;
}
