/**
 * Slurm job states → AppState (TorchX `SLURM_STATES`) and the decoding of the raw wait status slurmrestd
 * reports as `exit_code`.
 *
 * @module
 */
import type { AppState } from '../../specs/index.js';

/** TorchX's `SLURM_STATES`, verbatim. */
export const SLURM_STATES: Readonly<Record<string, AppState>> = Object.freeze({
  BOOT_FAIL: 'FAILED',
  CANCELLED: 'CANCELLED',
  COMPLETED: 'SUCCEEDED',
  DEADLINE: 'FAILED',
  FAILED: 'FAILED',
  NODE_FAIL: 'FAILED',
  OUT_OF_MEMORY: 'FAILED',
  PENDING: 'PENDING',
  PREEMPTED: 'FAILED',
  RUNNING: 'RUNNING',
  REQUEUED: 'PENDING',
  RESIZING: 'PENDING',
  REVOKED: 'FAILED',
  SUSPENDED: 'PENDING',
  TIMEOUT: 'FAILED',
});

/**
 * TorchX `appstate_from_slurm_state`: UNKNOWN for states it does not list (e.g. `COMPLETING`). Slurm ≥ 23.11
 * reports a list of states; its first entry counts, as in TorchX's `get_appstate_from_job`.
 */
export function appStateFromSlurm(state: string | readonly string[] | undefined): AppState {
  const first = Array.isArray(state) ? state[0] : state;
  return (
    (typeof first === 'string' && Object.hasOwn(SLURM_STATES, first) && SLURM_STATES[first]) || 'UNKNOWN'
  );
}

/** A decoded wait status: the exit code, and the signal when the process was killed by one. */
export interface DecodedExit {
  /** The process's exit code; `128 + signal` when it was killed by a signal (the shell's convention). */
  exitCode: number;
  signal?: number;
}

/**
 * Decodes a raw wait status (`WIFEXITED`/`WEXITSTATUS`, `WTERMSIG`), as slurmrestd v0.0.38 reports it in
 * `exit_code` and `derived_exit_code` (768 is exit code 3; 9 is SIGKILL).
 */
export function decodeWaitStatus(status: number): DecodedExit {
  const signal = status & 0x7f;
  if (signal === 0) return { exitCode: (status >> 8) & 0xff };
  return { exitCode: 128 + signal, signal };
}
