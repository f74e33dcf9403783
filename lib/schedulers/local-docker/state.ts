/**
 * Docker container states to AppStates (TorchX's `docker_scheduler.CONTAINER_STATE` and `_get_app_state`).
 *
 * @module
 */
import type { AppState } from '../../specs/index.js';

/** Docker `State.Status` of a container that has not exited → AppState (TorchX `CONTAINER_STATE`). */
export const CONTAINER_STATE: Readonly<Record<string, AppState>> = Object.freeze({
  created: 'SUBMITTED',
  restarting: 'PENDING',
  running: 'RUNNING',
  paused: 'PENDING',
  removing: 'PENDING',
  dead: 'FAILED',
});

/**
 * The state of one container: an exited container SUCCEEDED with exit code 0 and FAILED otherwise; other
 * statuses by {@link CONTAINER_STATE}; unknown ones UNKNOWN (TorchX raised KeyError).
 *
 * @example
 * ```ts
 * containerStateOf('exited', 137); // 'FAILED'
 * ```
 */
export function containerStateOf(status: string, exitCode?: number): AppState {
  if (status === 'exited') return exitCode === 0 ? 'SUCCEEDED' : 'FAILED';
  return Object.hasOwn(CONTAINER_STATE, status) ? (CONTAINER_STATE[status] as AppState) : 'UNKNOWN';
}
