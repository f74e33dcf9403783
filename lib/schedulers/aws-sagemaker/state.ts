/**
 * Pure mapping of a SageMaker training job — a `DescribeTrainingJob` response or the `detail` of a
 * "SageMaker Training Job State Change" EventBridge event — to an {@link AppStateTransition}. No I/O, no
 * SDK: the EventBridge handler and the scheduler's `describe` share it, so both report the same state.
 *
 * | TrainingJobStatus | SecondaryStatus | AppState |
 * |---|---|---|
 * | InProgress | Starting, Pending, Downloading, DownloadingTrainingImage, LaunchingMLInstances, PreparingTrainingStack, Restarting, Interrupted | PENDING |
 * | InProgress | Training, Uploading, Updating (or none / unknown) | RUNNING |
 * | Completed | any | SUCCEEDED |
 * | Failed | any | FAILED (reason: FailureReason) |
 * | Stopping | any | the state before the stop request (PENDING or RUNNING, from the transitions); CANCELLED without transitions, as TorchX maps Stopping |
 * | Stopped | MaxRuntimeExceeded, MaxWaitTimeExceeded | FAILED (reason: the limit) |
 * | Stopped | Stopped (or other) | CANCELLED |
 * | Deleting | Completed / Failed, MaxRuntimeExceeded, MaxWaitTimeExceeded / Stopped | SUCCEEDED / FAILED / CANCELLED |
 * | anything else | | UNKNOWN |
 *
 * @module
 */
import {
  type AppState,
  type AppStateTransition,
  makeStateReason,
  NONE,
  type RoleStatus,
  type StateReason,
  type TransitionSource,
} from '../../specs/index.js';

/** A timestamp as SageMaker sends it: a Date (SDK), epoch ms or s as a number or numeric string, or ISO-8601. */
export type SageMakerTimestamp = Date | number | string;

/** One entry of `SecondaryStatusTransitions`. */
export interface SageMakerStatusTransitionLike {
  Status?: string | undefined;
  StartTime?: SageMakerTimestamp | undefined;
  EndTime?: SageMakerTimestamp | undefined;
  StatusMessage?: string | undefined;
}

/** A tag as the API lists it. */
export interface SageMakerTagLike {
  Key?: string | undefined;
  Value?: string | undefined;
}

/**
 * The fields of a training job this module reads. Both the SDK's `DescribeTrainingJobResponse` and an
 * EventBridge event's `detail` fit (events carry `Tags` as a map, the API as a list).
 */
export interface SageMakerTrainingJobLike {
  TrainingJobName?: string | undefined;
  TrainingJobArn?: string | undefined;
  TrainingJobStatus?: string | undefined;
  SecondaryStatus?: string | undefined;
  FailureReason?: string | undefined;
  CreationTime?: SageMakerTimestamp | undefined;
  TrainingStartTime?: SageMakerTimestamp | undefined;
  TrainingEndTime?: SageMakerTimestamp | undefined;
  LastModifiedTime?: SageMakerTimestamp | undefined;
  SecondaryStatusTransitions?: readonly SageMakerStatusTransitionLike[] | undefined;
  ResourceConfig?: { InstanceCount?: number | undefined; InstanceType?: string | undefined } | undefined;
  Environment?: Readonly<Record<string, string>> | undefined;
  Tags?: Readonly<Record<string, string>> | readonly SageMakerTagLike[] | undefined;
}

/** Tag holding the role name (events carry tags but no environment). */
export const ROLE_NAME_TAG = 'torchx.pytorch.org/role-name';
/** Environment variable holding the role name. */
export const ROLE_NAME_ENV = 'TORCHX_ROLE_NAME';
/** Role name used when a job carries none (jobs not launched by torchx-serverless); as TorchX's Batch. */
export const DEFAULT_ROLE_NAME = 'node';

const PENDING_SECONDARY = new Set([
  'Starting',
  'Pending',
  'Downloading',
  'DownloadingTrainingImage',
  'LaunchingMLInstances',
  'PreparingTrainingStack',
  'Restarting',
  'Interrupted',
]);
const LIMIT_SECONDARY = new Set(['MaxRuntimeExceeded', 'MaxWaitTimeExceeded']);

/** Numbers below this are epoch seconds (the API's JSON wire format), above it epoch milliseconds. */
const SECONDS_THRESHOLD = 1e11;

/**
 * Epoch milliseconds of a SageMaker timestamp; undefined when absent or unparseable.
 *
 * @example
 * ```ts
 * parseSageMakerTime('1583831889050');            // 1583831889050
 * parseSageMakerTime(1583831889.05);              // 1583831889050 (seconds)
 * parseSageMakerTime('2020-03-10T09:18:09.050Z'); // 1583831889050
 * ```
 */
export function parseSageMakerTime(value: SageMakerTimestamp | undefined | null): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (value instanceof Date) {
    const ms = value.getTime();
    return Number.isNaN(ms) ? undefined : ms;
  }
  if (typeof value === 'number') return fromEpochNumber(value);
  const trimmed = value.trim();
  if (trimmed === '') return undefined;
  if (/^[+-]?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(trimmed)) return fromEpochNumber(Number(trimmed));
  const parsed = Date.parse(trimmed);
  return Number.isNaN(parsed) ? undefined : parsed;
}

function fromEpochNumber(value: number): number | undefined {
  if (!Number.isFinite(value)) return undefined;
  return Math.round(Math.abs(value) < SECONDS_THRESHOLD ? value * 1000 : value);
}

/** The tags of a job as a map, whether they came as a map (events) or a `{Key, Value}` list (API). */
export function sageMakerTagsOf(job: SageMakerTrainingJobLike): Record<string, string> {
  const tags = job.Tags;
  if (tags === undefined) return {};
  if (Array.isArray(tags)) {
    const map: Record<string, string> = {};
    for (const tag of tags as readonly SageMakerTagLike[]) {
      if (tag.Key !== undefined) map[tag.Key] = tag.Value ?? '';
    }
    return map;
  }
  return { ...(tags as Readonly<Record<string, string>>) };
}

/** The role name of a job: `TORCHX_ROLE_NAME` from its environment, else its role-name tag; undefined if neither. */
export function sageMakerRoleNameOf(job: SageMakerTrainingJobLike): string | undefined {
  return job.Environment?.[ROLE_NAME_ENV] ?? sageMakerTagsOf(job)[ROLE_NAME_TAG];
}

function inProgressState(secondary: string | undefined): AppState {
  return secondary !== undefined && PENDING_SECONDARY.has(secondary) ? 'PENDING' : 'RUNNING';
}

/**
 * The AppState of a job from its primary and secondary status (see the module table).
 *
 * @example
 * ```ts
 * sageMakerStateOf('InProgress', 'Pending'); // 'PENDING'
 * sageMakerStateOf('Stopped', 'MaxRuntimeExceeded'); // 'FAILED'
 * ```
 */
export function sageMakerStateOf(
  status: string | undefined,
  secondary: string | undefined,
  transitions: readonly SageMakerStatusTransitionLike[] = [],
): AppState {
  switch (status) {
    case 'InProgress':
      return secondary === 'Stopping'
        ? (stateBeforeStop(transitions) ?? 'RUNNING') // TorchX: InProgress is RUNNING
        : inProgressState(secondary);
    case 'Completed':
      return 'SUCCEEDED';
    case 'Failed':
      return 'FAILED';
    case 'Stopping':
      return stateBeforeStop(transitions) ?? 'CANCELLED'; // TorchX's JOB_STATE maps Stopping to CANCELLED
    case 'Stopped':
      return secondary !== undefined && LIMIT_SECONDARY.has(secondary) ? 'FAILED' : 'CANCELLED';
    case 'Deleting':
      if (secondary === 'Completed') return 'SUCCEEDED';
      if (secondary === 'Failed' || (secondary !== undefined && LIMIT_SECONDARY.has(secondary)))
        return 'FAILED';
      return secondary === 'Stopped' ? 'CANCELLED' : 'UNKNOWN';
    default:
      return 'UNKNOWN';
  }
}

function stateBeforeStop(transitions: readonly SageMakerStatusTransitionLike[]): AppState | undefined {
  for (let i = transitions.length - 1; i >= 0; i--) {
    const status = transitions[i]?.Status;
    if (status !== undefined && status !== 'Stopping') return inProgressState(status);
  }
  return undefined;
}

/**
 * How many times the job was restarted: `Restarting` transitions, plus `Starting` transitions after the
 * first that do not directly follow a `Restarting` (SageMaker's retry strategy and spot interruptions start
 * the job again).
 */
export function sageMakerNumRestarts(transitions: readonly SageMakerStatusTransitionLike[] = []): number {
  let restarts = 0;
  let startedBefore = false;
  let previous: string | undefined;
  for (const transition of transitions) {
    if (transition.Status === 'Restarting') restarts += 1;
    else if (transition.Status === 'Starting') {
      if (startedBefore && previous !== 'Restarting') restarts += 1;
      startedBefore = true;
    }
    previous = transition.Status;
  }
  return restarts;
}

const ARN_PATTERN = /^arn:(aws|aws-cn|aws-us-gov):sagemaker:([a-z0-9-]+):\d+:training-job\/([A-Za-z0-9-]+)$/;

/**
 * Console URL of a training job, for the `aws`, `aws-cn` and `aws-us-gov` partitions; undefined for other
 * partitions or a malformed ARN. The name is taken from `jobName` when given (ARNs are lower-cased by
 * SageMaker, names are not).
 *
 * @example
 * ```ts
 * sageMakerUiUrl('arn:aws:sagemaker:us-east-1:123456789012:training-job/job-id');
 * // 'https://us-east-1.console.aws.amazon.com/sagemaker/home?region=us-east-1#jobs/job-id'
 * ```
 */
export function sageMakerUiUrl(arn: string | undefined, jobName?: string): string | undefined {
  if (arn === undefined) return undefined;
  const match = ARN_PATTERN.exec(arn);
  if (!match) return undefined;
  const [, partition, region = '', arnName = ''] = match;
  const name = encodeURIComponent(jobName ?? arnName);
  const query = `sagemaker/home?region=${region}#jobs/${name}`;
  switch (partition) {
    case 'aws-cn':
      return `https://${region}.console.amazonaws.cn/${query}`;
    case 'aws-us-gov':
      return `https://console.amazonaws-us-gov.com/${query}`;
    default:
      return `https://${region}.console.aws.amazon.com/${query}`;
  }
}

function lastTransition(job: SageMakerTrainingJobLike): SageMakerStatusTransitionLike | undefined {
  const transitions = job.SecondaryStatusTransitions ?? [];
  return transitions[transitions.length - 1];
}

/**
 * Why the job is in its state, in SageMaker's words: FailureReason for failed jobs, otherwise the secondary
 * status and the latest transition's message (`Training: Training image download completed…`).
 */
export function sageMakerReasonOf(job: SageMakerTrainingJobLike): string | undefined {
  if (job.FailureReason !== undefined && job.FailureReason !== '') return job.FailureReason;
  const secondary = job.SecondaryStatus;
  const latest = lastTransition(job);
  const message = latest?.Status === secondary ? latest?.StatusMessage : undefined;
  if (secondary === undefined) return message;
  return message ? `${secondary}: ${message}` : secondary;
}

/**
 * The job's reason for its state with since-when: `FailureReason` for a failed job (since it ended);
 * otherwise the latest SecondaryStatusTransition's `StatusMessage`, coded with its status (`Starting`,
 * `LaunchingMLInstances`, `Downloading`, `Training` …) and holding since its `StartTime`.
 */
export function sageMakerStateReasonOf(job: SageMakerTrainingJobLike): StateReason | undefined {
  const latest = lastTransition(job);
  const code = job.SecondaryStatus ?? latest?.Status;
  if (job.FailureReason !== undefined && job.FailureReason !== '') {
    const since = sageMakerEventTimeOf(job);
    return makeStateReason('aws_sagemaker', job.FailureReason, since, code);
  }
  if (latest === undefined) return makeStateReason('aws_sagemaker', code, sageMakerEventTimeOf(job), code);
  const since = parseSageMakerTime(latest.StartTime) ?? sageMakerEventTimeOf(job);
  return makeStateReason('aws_sagemaker', latest.StatusMessage ?? latest.Status, since, latest.Status);
}

/** When the job last changed, in epoch ms: LastModifiedTime, else TrainingEndTime, the latest transition, start or creation time; 0 if none. */
export function sageMakerEventTimeOf(job: SageMakerTrainingJobLike): number {
  return (
    parseSageMakerTime(job.LastModifiedTime) ??
    parseSageMakerTime(job.TrainingEndTime) ??
    parseSageMakerTime(lastTransition(job)?.StartTime) ??
    parseSageMakerTime(job.TrainingStartTime) ??
    parseSageMakerTime(job.CreationTime) ??
    0
  );
}

/**
 * Replica statuses: SageMaker reports one state for the whole cluster, so every host (`algo-1` … `algo-N`)
 * carries the job's state. Undefined when the role name or instance count is unknown.
 */
export function sageMakerRoleStatusesOf(
  job: SageMakerTrainingJobLike,
  state: AppState,
  role: string | undefined = sageMakerRoleNameOf(job),
): RoleStatus[] | undefined {
  const count = job.ResourceConfig?.InstanceCount;
  if (role === undefined || count === undefined) return undefined;
  const replicas = Array.from({ length: count }, (_, id) => ({
    id,
    state,
    role,
    hostname: `algo-${id + 1}`,
    structuredErrorMsg: NONE,
  }));
  return [{ role, replicas }];
}

/**
 * The transition a training job's current description stands for.
 *
 * - `attempt` is the number of SecondaryStatusTransitions (grows with every step, including restarts, so a
 *   retry that goes back to PENDING still moves forward);
 * - `eventTime` is {@link sageMakerEventTimeOf};
 * - `reason`, `numRestarts`, `roles` and `uiUrl` are filled when the job carries what they need.
 *
 * @param job a DescribeTrainingJob response or an EventBridge event's `detail`
 * @example
 * ```ts
 * const t = sageMakerTransitionOf(event.detail, 'event');
 * // { state: 'RUNNING', attempt: 3, eventTime: 1735740240000, source: 'event', ... }
 * ```
 */
export function sageMakerTransitionOf(
  job: SageMakerTrainingJobLike,
  source: TransitionSource,
): AppStateTransition {
  const transitions = job.SecondaryStatusTransitions ?? [];
  const state = sageMakerStateOf(job.TrainingJobStatus, job.SecondaryStatus, transitions);
  const transition: AppStateTransition = {
    state,
    eventTime: sageMakerEventTimeOf(job),
    attempt: transitions.length,
    source,
    numRestarts: sageMakerNumRestarts(transitions),
  };
  const reason = sageMakerReasonOf(job);
  if (reason !== undefined) transition.reason = reason;
  const stateReason = sageMakerStateReasonOf(job);
  if (stateReason !== undefined) transition.stateReason = stateReason;
  const roles = sageMakerRoleStatusesOf(job, state);
  if (roles !== undefined) transition.roles = roles;
  const uiUrl = sageMakerUiUrl(job.TrainingJobArn, job.TrainingJobName);
  if (uiUrl !== undefined) transition.uiUrl = uiUrl;
  return transition;
}
