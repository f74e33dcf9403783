/**
 * Native state-change events → one `AppStateTransition` routed by scheduler and native job name.
 * Sources: AWS Batch "Batch Job State Change" and "Batch Job Queue Blocked", SageMaker "SageMaker Training
 * Job State Change" (all via EventBridge), and the local scheduler's in-process events (same envelope, so
 * local mode runs the deployed code path).
 *
 * @module
 */
import { parseBatchAppId, sameQueue } from '../schedulers/aws-batch/app-id.js';
import { batchTransitionOf, parseEpochMs } from '../schedulers/aws-batch/state.js';
import { sageMakerTransitionOf } from '../schedulers/aws-sagemaker/state.js';
import type { AppStateTransition, StateReason } from '../specs/index.js';

/** EventBridge source and detail-type of the local scheduler's events. */
export const LOCAL_EVENT_SOURCE = 'torchx-serverless.local';
export const LOCAL_EVENT_DETAIL_TYPE = 'Local App State Change';

/** The EventBridge envelope fields we read. */
export interface StateChangeEnvelope {
  source?: string;
  'detail-type'?: string;
  time?: string;
  detail?: unknown;
}

/** A transition for the app a scheduler knows by `nativeName`. */
export interface RoutedTransition {
  scheduler: string;
  nativeName: string;
  /** The app id when the event names it (Batch: `<queue name>:<job name>`): the record is read by key. */
  appId?: string;
  transition: AppStateTransition;
  /**
   * A "Batch Job Queue Blocked" event: the job at the head of the queue cannot start, so every app waiting
   * in that queue waits for the same reason. Apply `stateReason` to the waiting apps `inQueue` accepts.
   */
  queueBlocked?: { inQueue: (appId: string) => boolean; stateReason: StateReason };
}

/** A Batch event's app id: the queue's name (from its ARN) and the job name, as the scheduler makes it. */
function batchAppIdOf(jobQueue: unknown, jobName: string): string | undefined {
  if (typeof jobQueue !== 'string' || jobQueue === '') return undefined;
  const name = jobQueue.slice(jobQueue.lastIndexOf('/') + 1);
  return name === '' || name.includes(':') ? undefined : `${name}:${jobName}`;
}

/** Why an event produced no transition. */
export type IgnoredEvent = { ignored: string };

/** The local scheduler's event detail. */
export interface LocalStateChangeDetail {
  appId: string;
  transition: AppStateTransition;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * Maps one EventBridge event to a routed transition, or says why it is ignored (unknown source, an MNP node
 * job's own event, a malformed detail).
 *
 * @example
 * ```ts
 * const routed = mapStateChangeEvent(event);
 * if (!('ignored' in routed)) await runner.applyNativeTransition(routed.scheduler, routed.nativeName, routed.transition);
 * ```
 */
export function mapStateChangeEvent(event: StateChangeEnvelope): RoutedTransition | IgnoredEvent {
  const detail = event.detail;
  if (!isRecord(detail)) return { ignored: 'event has no detail object' };
  const kind = `${event.source}/${event['detail-type']}`;
  switch (kind) {
    case 'aws.batch/Batch Job State Change':
    case 'aws.batch/Batch Job Queue Blocked': {
      const jobName = detail.jobName;
      const jobId = detail.jobId;
      if (typeof jobName !== 'string' || typeof detail.status !== 'string')
        return { ignored: 'Batch detail lacks jobName/status' };
      if (typeof jobId === 'string' && jobId.includes('#')) {
        return { ignored: 'multi-node child job event (the parent job carries the app state)' };
      }
      const appId = batchAppIdOf(detail.jobQueue, jobName);
      const transition = batchTransitionOf(detail as never, 'event', parseEpochMs(event.time));
      const routed: RoutedTransition = {
        scheduler: 'aws_batch',
        nativeName: jobName,
        ...(appId !== undefined ? { appId } : {}),
        transition,
      };
      const jobQueue = detail.jobQueue;
      if (event['detail-type'] === 'Batch Job Queue Blocked' && typeof jobQueue === 'string') {
        const blocking = transition.stateReason;
        if (blocking !== undefined) {
          routed.queueBlocked = {
            inQueue: (id) => {
              const parsed = parseBatchAppId(id);
              return parsed !== undefined && parsed.jobName !== jobName && sameQueue(jobQueue, parsed.queue);
            },
            stateReason: { ...blocking, text: `the queue is blocked by job ${jobName}: ${blocking.text}` },
          };
        }
      }
      return routed;
    }
    case 'aws.sagemaker/SageMaker Training Job State Change': {
      const name = detail.TrainingJobName;
      if (typeof name !== 'string' || typeof detail.TrainingJobStatus !== 'string') {
        return { ignored: 'SageMaker detail lacks TrainingJobName/TrainingJobStatus' };
      }
      return {
        scheduler: 'aws_sagemaker',
        nativeName: name,
        appId: name,
        transition: sageMakerTransitionOf(detail as never, 'event'),
      };
    }
    case `${LOCAL_EVENT_SOURCE}/${LOCAL_EVENT_DETAIL_TYPE}`: {
      const local = detail as unknown as LocalStateChangeDetail;
      if (typeof local.appId !== 'string' || !isRecord(local.transition))
        return { ignored: 'local detail lacks appId/transition' };
      return {
        scheduler: 'local_cwd',
        nativeName: local.appId,
        appId: local.appId,
        transition: local.transition,
      };
    }
    default:
      return { ignored: `not a state-change event we handle (${kind})` };
  }
}

/** Wraps a local scheduler transition in the EventBridge envelope the state-change function receives. */
export function localStateChangeEvent(appId: string, transition: AppStateTransition) {
  return {
    version: '0',
    id: `${appId}-${transition.state}-${transition.eventTime}`,
    'detail-type': LOCAL_EVENT_DETAIL_TYPE,
    source: LOCAL_EVENT_SOURCE,
    account: 'local',
    time: new Date(transition.eventTime).toISOString(),
    region: 'local',
    resources: [],
    detail: { appId, transition } satisfies LocalStateChangeDetail,
  };
}
