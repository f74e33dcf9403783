/**
 * Volcano Job phases and task phases to AppStates (TorchX's `kubernetes_scheduler.JOB_STATE` and
 * `TASK_STATE`).
 *
 * @module
 */
import { type AppState, makeStateReason, type StateReason } from '../../specs/index.js';

/** Volcano `status.state.phase` → AppState (TorchX `JOB_STATE`). */
export const VOLCANO_JOB_STATE: Readonly<Record<string, AppState>> = Object.freeze({
  Pending: 'PENDING',
  Aborting: 'RUNNING',
  Aborted: 'CANCELLED',
  Running: 'RUNNING',
  Restarting: 'RUNNING',
  Completed: 'SUCCEEDED',
  Terminating: 'RUNNING',
  Terminated: 'FAILED',
  Failed: 'FAILED',
});

/** Volcano task (pod) phase in `status.taskStatusCount` → replica state (TorchX `TASK_STATE`). */
export const VOLCANO_TASK_STATE: Readonly<Record<string, AppState>> = Object.freeze({
  Pending: 'PENDING',
  Allocated: 'PENDING',
  Pipelined: 'PENDING',
  Binding: 'PENDING',
  Bound: 'PENDING',
  Running: 'RUNNING',
  Releasing: 'RUNNING',
  Succeeded: 'SUCCEEDED',
  Failed: 'FAILED',
  Unknown: 'UNKNOWN',
});

/**
 * Looks `key` up in a state table; UNKNOWN for anything else (TorchX raised KeyError).
 *
 * @example
 * ```ts
 * stateFrom(VOLCANO_JOB_STATE, 'Completed'); // 'SUCCEEDED'
 * ```
 */
export function stateFrom(table: Readonly<Record<string, AppState>>, key: string | undefined): AppState {
  return key !== undefined && Object.hasOwn(table, key) ? (table[key] as AppState) : 'UNKNOWN';
}

/** The parts of a Pod the wait reason reads. */
export interface PodLike {
  metadata?: { name?: string };
  status?: {
    phase?: string;
    conditions?: {
      type?: string;
      status?: string;
      reason?: string;
      message?: string;
      lastTransitionTime?: string;
    }[];
    containerStatuses?: { state?: { waiting?: { reason?: string; message?: string } } }[];
  };
}

/** Container waiting reasons that are only the normal start of a container, not a reason to report. */
const ROUTINE_WAITING = new Set(['ContainerCreating', 'PodInitializing']);

/**
 * Why the first waiting pod of an app waits, in Kubernetes' words: a `PodScheduled` condition that is
 * `False` (reason `Unschedulable`, message `0/3 nodes are available: 3 Insufficient nvidia.com/gpu.`),
 * holding since its `lastTransitionTime`; otherwise a container's waiting reason (`ImagePullBackOff`,
 * `CrashLoopBackOff`), holding since `now`. Undefined when no pod waits for anything but its start.
 *
 * @param now epoch ms
 */
export function podWaitReasonOf(pods: readonly PodLike[], now: number): StateReason | undefined {
  for (const pod of pods) {
    const scheduled = pod.status?.conditions?.find((c) => c.type === 'PodScheduled' && c.status === 'False');
    if (scheduled !== undefined) {
      const text = scheduled.message ?? scheduled.reason;
      const since = scheduled.lastTransitionTime ?? new Date(now).toISOString();
      const reason = makeStateReason('kubernetes', text, since, scheduled.reason);
      if (reason !== undefined) return reason;
    }
  }
  for (const pod of pods) {
    for (const container of pod.status?.containerStatuses ?? []) {
      const waiting = container.state?.waiting;
      if (waiting?.reason === undefined || ROUTINE_WAITING.has(waiting.reason)) continue;
      const text = waiting.message ? `${waiting.reason}: ${waiting.message}` : waiting.reason;
      const reason = makeStateReason('kubernetes', text, now, waiting.reason);
      if (reason !== undefined) return reason;
    }
  }
  return undefined;
}
