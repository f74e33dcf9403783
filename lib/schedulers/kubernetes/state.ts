/**
 * Volcano Job phases and task phases to AppStates (TorchX's `kubernetes_scheduler.JOB_STATE` and
 * `TASK_STATE`).
 *
 * @module
 */
import type { AppState } from '../../specs/index.js';

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
