/**
 * AppWrapper states and task states to AppStates (TorchX's `kubernetes_mcad_scheduler.JOB_STATE` and
 * `TASK_STATE`).
 *
 * @module
 */
import type { AppState } from '../../specs/index.js';

/** AppWrapper `status.state` → AppState (TorchX `JOB_STATE`); an AppWrapper without status is Pending. */
export const APPWRAPPER_STATE: Readonly<Record<string, AppState>> = Object.freeze({
  Pending: 'PENDING',
  Running: 'RUNNING',
  Deleted: 'CANCELLED',
  Failed: 'FAILED',
});

/** AppWrapper task counters → replica state (TorchX `TASK_STATE`; MCAD's own mixed-case keys). */
export const APPWRAPPER_TASK_STATE: Readonly<Record<string, AppState>> = Object.freeze({
  'Pending dispatch': 'PENDING',
  pending: 'PENDING',
  running: 'RUNNING',
  Succeeded: 'SUCCEEDED',
  failed: 'FAILED',
  Unknown: 'UNKNOWN',
});
