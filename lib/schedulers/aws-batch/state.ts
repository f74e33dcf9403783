/**
 * Pure mapping from an AWS Batch job (a DescribeJobs `JobDetail`, or the `detail` of a "Batch Job State
 * Change" EventBridge event, which resembles it) to torchx-serverless states and transitions. No AWS calls.
 *
 * TorchX mapped every Batch status through one table and so reported cancelled jobs as FAILED; here a FAILED
 * job that was cancelled or terminated on request is CANCELLED.
 *
 * @module
 */
import type { JobStatus } from '@aws-sdk/client-batch';
import type {
  AppState,
  AppStateTransition,
  AttemptOutcome,
  StateReason,
  TransitionSource,
} from '../../specs/index.js';
import { isTerminal, MAX_ATTEMPT_OUTCOMES, MAX_REASON_TEXT, makeStateReason } from '../../specs/index.js';
import {
  type BatchContainerLike,
  type BatchContainersLike,
  type BatchTaskLike,
  containerReasonsOf,
  partReasonOf,
  roleContainerOf,
} from './task-containers.js';

/** Batch status → AppState (TorchX's `JOB_STATE`). */
export const BATCH_JOB_STATE: Readonly<Record<JobStatus, AppState>> = Object.freeze({
  SUBMITTED: 'PENDING',
  PENDING: 'PENDING',
  RUNNABLE: 'PENDING',
  STARTING: 'PENDING',
  RUNNING: 'RUNNING',
  SUCCEEDED: 'SUCCEEDED',
  FAILED: 'FAILED',
});

/**
 * Prefix of the reason torchx-serverless gives CancelJob/TerminateJob; a FAILED job whose `statusReason`
 * starts with it was cancelled through us.
 */
export const CANCEL_REASON_PREFIX = 'torchx-serverless cancel: ';

/** What Batch writes as `statusReason` when an attempt exceeded its timeout (Batch terminates it). */
const TIMEOUT_REASON = /attempt duration exceeded timeout/i;

/** A timestamp as Batch sends it: epoch ms as a number; events and JSON copies may carry strings. */
export type BatchTimestamp = number | string;

/** One finished attempt. */
export interface BatchAttemptLike {
  container?: BatchContainerLike;
  /** The attempt's task, for a multi-container (`ecsProperties`) job. */
  taskProperties?: BatchTaskLike[];
  startedAt?: BatchTimestamp;
  stoppedAt?: BatchTimestamp;
  statusReason?: string;
}

/**
 * The members of a Batch `JobDetail` (or event `detail`) that the mapping reads. Both the SDK's `JobDetail`
 * and a parsed event `detail` fit; unknown members are ignored.
 */
export interface BatchJobLike {
  jobArn?: string;
  jobId?: string;
  jobName?: string;
  status?: string;
  statusReason?: string;
  isCancelled?: boolean;
  isTerminated?: boolean;
  createdAt?: BatchTimestamp;
  startedAt?: BatchTimestamp;
  stoppedAt?: BatchTimestamp;
  attempts?: BatchAttemptLike[];
  container?: BatchContainerLike;
  /** The job's task, for a multi-container (`ecsProperties`) job. */
  ecsProperties?: { taskProperties?: BatchTaskLike[] };
}

/**
 * Epoch ms from a number, a numeric string (`"1735732800000"`) or an ISO-8601 string; undefined otherwise.
 *
 * @example
 * ```ts
 * parseEpochMs('1735732800000'); // 1735732800000
 * parseEpochMs('2025-01-01T12:00:00Z'); // 1735732800000
 * ```
 */
export function parseEpochMs(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  const trimmed = value.trim();
  if (/^-?\d+(\.\d+)?$/.test(trimmed)) return Number(trimmed);
  const parsed = Date.parse(trimmed);
  return Number.isNaN(parsed) ? undefined : parsed;
}

/** True when the job was stopped on request (CancelJob or TerminateJob), not by its own failure or a timeout. */
export function wasCancelled(job: BatchJobLike): boolean {
  const reason = job.statusReason ?? '';
  if (reason.startsWith(CANCEL_REASON_PREFIX)) return true;
  if (TIMEOUT_REASON.test(reason)) return false;
  return job.isCancelled === true || job.isTerminated === true;
}

/**
 * The AppState of a Batch job: {@link BATCH_JOB_STATE}, except that a FAILED job stopped on request is
 * CANCELLED. An unknown status gives UNKNOWN (TorchX raised KeyError).
 *
 * @example
 * ```ts
 * batchStateOf({ status: 'RUNNABLE' }); // 'PENDING'
 * batchStateOf({ status: 'FAILED', isCancelled: true }); // 'CANCELLED'
 * ```
 */
export function batchStateOf(job: BatchJobLike): AppState {
  const status = job.status ?? '';
  const state: AppState = Object.hasOwn(BATCH_JOB_STATE, status)
    ? BATCH_JOB_STATE[status as JobStatus]
    : 'UNKNOWN';
  return state === 'FAILED' && wasCancelled(job) ? 'CANCELLED' : state;
}

/**
 * Batch's reason code at the start of a `statusReason`: `CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY - …`,
 * `MISCONFIGURATION:JOB_RESOURCE_REQUIREMENT - …`, `ACTION_REQUIRED - …`.
 */
const REASON_CODE = /^([A-Z][A-Z0-9_]*(?::[A-Z][A-Z0-9_]*)?)(?= - |$)/;

/**
 * What Batch writes as an attempt's `statusReason` when the instance under it went away (a Spot reclaim, a
 * host termination): `Host EC2 (instance i-0abc…) terminated.` The attempt is not the app's failure.
 */
const HOST_TERMINATED = /^Host EC2 \(instance [^)]*\) terminated/i;

/**
 * The code of a Batch `statusReason`, when it starts with one (`MISCONFIGURATION:JOB_RESOURCE_REQUIREMENT`).
 *
 * @example
 * ```ts
 * batchReasonCodeOf('CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY - Service cannot fulfill …');
 * // 'CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY'
 * ```
 */
export function batchReasonCodeOf(statusReason: string | undefined): string | undefined {
  return REASON_CODE.exec(statusReason ?? '')?.[1];
}

/** True when Batch says the host under an attempt was terminated (Spot reclaim, host retirement). */
export function isHostTermination(reason: string | undefined): boolean {
  return HOST_TERMINATED.test(reason ?? '');
}

/** Batch statuses in which the job waits: without a `statusReason`, the status itself is what Batch says. */
const WAITING_STATUSES: ReadonlySet<string> = new Set(['SUBMITTED', 'PENDING', 'RUNNABLE', 'STARTING']);

/**
 * The job's reason for its state with since-when: {@link batchReasonOf} with its Batch code, holding since
 * `observedAt` (when Batch reported it: the event's time, or now for a description), or since `stoppedAt`
 * once the job finished. A waiting job without a `statusReason` gets its Batch status as the reason:
 * `STARTING` since `observedAt`, so a capacity reason gives way once the job is placed; `SUBMITTED`,
 * `PENDING` and `RUNNABLE` since the job (or its latest retry) entered the queue, so they never replace a
 * reason that appeared later (the queue-blocked reason of a job behind the blocked one, which Batch gives no
 * `statusReason` of its own). Undefined when Batch said nothing.
 */
export function batchStateReasonOf(job: BatchJobLike, observedAt: number): StateReason | undefined {
  const status = job.status ?? '';
  if (!job.statusReason && WAITING_STATUSES.has(status)) {
    const attempts = job.attempts ?? [];
    const queuedAt = parseEpochMs(attempts[attempts.length - 1]?.stoppedAt) ?? parseEpochMs(job.createdAt);
    const since = status === 'STARTING' ? observedAt : (queuedAt ?? observedAt);
    return makeStateReason('aws_batch', status, since, status);
  }
  const stoppedAt = status === 'FAILED' || status === 'SUCCEEDED' ? parseEpochMs(job.stoppedAt) : undefined;
  return makeStateReason(
    'aws_batch',
    batchReasonOf(job),
    stoppedAt ?? observedAt,
    batchReasonCodeOf(job.statusReason),
  );
}

function isoOf(value: BatchTimestamp | undefined): string | undefined {
  const ms = parseEpochMs(value);
  return ms === undefined ? undefined : new Date(ms).toISOString();
}

/**
 * How each finished attempt ended (the newest {@link MAX_ATTEMPT_OUTCOMES}): exit code, Batch's and the
 * container's reasons, times, and whether the infrastructure ended it ({@link isHostTermination}).
 */
export function batchAttemptOutcomesOf(job: BatchJobLike): AttemptOutcome[] {
  const attempts = job.attempts ?? [];
  const first = Math.max(0, attempts.length - MAX_ATTEMPT_OUTCOMES);
  return attempts.slice(first).map((attempt, i) => {
    const outcome: AttemptOutcome = { attempt: first + i + 1 };
    const container = roleContainerOf(attempt);
    const exitCode = container?.exitCode;
    if (exitCode !== undefined) outcome.exitCode = exitCode;
    const reason = partReasonOf(attempt);
    if (reason !== '') outcome.reason = reason.slice(0, MAX_REASON_TEXT);
    const startedAt = isoOf(attempt.startedAt);
    if (startedAt !== undefined) outcome.startedAt = startedAt;
    const stoppedAt = isoOf(attempt.stoppedAt);
    if (stoppedAt !== undefined) outcome.stoppedAt = stoppedAt;
    if (isHostTermination(attempt.statusReason) || isHostTermination(container?.reason)) {
      outcome.infrastructure = true;
    }
    return outcome;
  });
}

/**
 * Restarts so far: every finished attempt is a restart while the job is still going; a finished job's last
 * attempt is not a restart.
 */
export function batchNumRestarts(job: BatchJobLike, state: AppState = batchStateOf(job)): number {
  const attempts = job.attempts?.length ?? 0;
  return isTerminal(state) ? Math.max(attempts - 1, 0) : attempts;
}

/** The job itself when it reports its container (or task), else its latest attempt. */
function latestPart(job: BatchJobLike): BatchContainersLike | undefined {
  const attempts = job.attempts ?? [];
  return roleContainerOf(job) !== undefined ? job : attempts[attempts.length - 1];
}

/**
 * Why the job is in its state, in Batch's words: `statusReason`, plus the exit code and container reason of
 * a failed job. Undefined when Batch said nothing.
 *
 * @example
 * ```ts
 * batchReasonOf({ status: 'FAILED', statusReason: 'Essential container in task exited', container: { exitCode: 1 } });
 * // 'Essential container in task exited; exit code 1'
 * ```
 */
export function batchReasonOf(job: BatchJobLike): string | undefined {
  const parts: string[] = [];
  if (job.statusReason) parts.push(job.statusReason);
  if (job.status === 'FAILED') {
    const part = latestPart(job);
    if (part !== undefined) parts.push(...containerReasonsOf(part));
  }
  return parts.length > 0 ? parts.join('; ') : undefined;
}

const CONSOLE_DOMAINS: Readonly<Record<string, string>> = {
  aws: 'console.aws.amazon.com',
  'aws-cn': 'console.amazonaws.cn',
  'aws-us-gov': 'console.amazonaws-us-gov.com',
};

const JOB_ARN = /^arn:(aws|aws-cn|aws-us-gov):batch:([a-z0-9-]+):\d{12}:job\/([A-Za-z0-9-]+)(?:#\d+)?$/;

/**
 * The Batch console page of a job, for the aws, aws-cn and aws-us-gov partitions (TorchX's link, which only
 * knew the aws partition). A node job (`<id>#<n>`) links to its parent. Undefined for anything else.
 *
 * @example
 * ```ts
 * batchConsoleUrl('arn:aws:batch:us-west-2:123456789012:job/abc');
 * // 'https://us-west-2.console.aws.amazon.com/batch/home?region=us-west-2#jobs/mnp-job/abc'
 * ```
 */
export function batchConsoleUrl(jobArn: string | undefined): string | undefined {
  const match = JOB_ARN.exec(jobArn ?? '');
  if (!match) return undefined;
  const [, partition = '', region = '', jobId = ''] = match;
  const domain = CONSOLE_DOMAINS[partition];
  return `https://${region}.${domain}/batch/home?region=${region}#jobs/mnp-job/${jobId}`;
}

/** True for the node job of a multi-node job (`jobId` `<parent>#<index>`); events for them are per node. */
export function isBatchNodeJob(job: BatchJobLike): boolean {
  return (job.jobId ?? job.jobArn ?? '').includes('#');
}

/**
 * The transition a Batch job's current description (or state-change event `detail`) reports:
 * state ({@link batchStateOf}), event time (`stoppedAt`, else `startedAt`, else `createdAt`, epoch ms, numbers
 * or strings), attempt (`attempts.length`, which grows on every retry), reason and state reason (holding
 * since `observedAt` unless the job finished), attempt outcomes, restarts and console URL.
 *
 * @param observedAt when Batch reported it (epoch ms): the event's `time`, or now for a description;
 *   default: the event time.
 *
 * @example
 * ```ts
 * const t = batchTransitionOf(event.detail, 'event');
 * store.records.transition(handle, t);
 * ```
 */
export function batchTransitionOf(
  job: BatchJobLike,
  source: TransitionSource,
  observedAt?: number,
): AppStateTransition {
  const state = batchStateOf(job);
  const eventTime =
    parseEpochMs(job.stoppedAt) ?? parseEpochMs(job.startedAt) ?? parseEpochMs(job.createdAt) ?? 0;
  const transition: AppStateTransition = {
    state,
    eventTime,
    attempt: job.attempts?.length ?? 0,
    source,
    numRestarts: batchNumRestarts(job, state),
  };
  const reason = batchReasonOf(job);
  if (reason !== undefined) transition.reason = reason;
  const stateReason = batchStateReasonOf(job, observedAt ?? eventTime);
  if (stateReason !== undefined) transition.stateReason = stateReason;
  if ((job.attempts?.length ?? 0) > 0) transition.attemptOutcomes = batchAttemptOutcomesOf(job);
  const uiUrl = batchConsoleUrl(job.jobArn);
  if (uiUrl !== undefined) transition.uiUrl = uiUrl;
  return transition;
}
