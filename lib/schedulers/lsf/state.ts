/**
 * LSF job states (`bjobs -o stat`) to AppStates, as TorchX's `lsf_scheduler.JOB_STATE` and `get_job_state`.
 *
 * @module
 */
import type { AppState } from '../../specs/index.js';

/** `bjobs` STAT → AppState (TorchX's `JOB_STATE`). */
export const LSF_JOB_STATE: Readonly<Record<string, AppState>> = Object.freeze({
  DONE: 'SUCCEEDED',
  EXIT: 'FAILED',
  PEND: 'PENDING',
  RUN: 'RUNNING',
  PSUSP: 'PENDING',
  USUSP: 'PENDING',
  SSUSP: 'PENDING',
});

/**
 * The AppState of an LSF job from its STAT and EXIT_CODE: unknown states are UNKNOWN, and an EXIT with code
 * 130 (SIGINT, as `bkill` sends) is CANCELLED (TorchX `get_job_state`).
 *
 * @example
 * ```ts
 * lsfStateOf('EXIT', '130'); // 'CANCELLED'
 * ```
 */
export function lsfStateOf(stat: string, exitCode: string): AppState {
  const state = Object.hasOwn(LSF_JOB_STATE, stat) ? (LSF_JOB_STATE[stat] as AppState) : 'UNKNOWN';
  return state === 'FAILED' && exitCode === '130' ? 'CANCELLED' : state;
}
