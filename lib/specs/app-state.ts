/**
 * Application states, with TorchX's numeric values. States travel as their names (`"RUNNING"`) in JSON;
 * {@link APP_STATE_VALUE} keeps TorchX's integers for ordering and display.
 *
 * An app starts UNSUBMITTED, moves through SUBMITTED and PENDING to RUNNING, and ends in a terminal state:
 * SUCCEEDED, FAILED or CANCELLED. Preemption may move a RUNNING app back to PENDING.
 *
 * @module
 */

/** The eight application states (TorchX `AppState`). */
export const AppState = {
  UNSUBMITTED: 'UNSUBMITTED',
  SUBMITTED: 'SUBMITTED',
  PENDING: 'PENDING',
  RUNNING: 'RUNNING',
  SUCCEEDED: 'SUCCEEDED',
  FAILED: 'FAILED',
  CANCELLED: 'CANCELLED',
  UNKNOWN: 'UNKNOWN',
} as const;
/** One of the eight state names. */
export type AppState = (typeof AppState)[keyof typeof AppState];

/** TorchX's integer value of each state: UNSUBMITTED=0 … UNKNOWN=7. */
export const APP_STATE_VALUE: Readonly<Record<AppState, number>> = Object.freeze({
  UNSUBMITTED: 0,
  SUBMITTED: 1,
  PENDING: 2,
  RUNNING: 3,
  SUCCEEDED: 4,
  FAILED: 5,
  CANCELLED: 6,
  UNKNOWN: 7,
});

/** Every state name, in TorchX's numeric order. */
export const APP_STATES: readonly AppState[] = Object.freeze(Object.keys(APP_STATE_VALUE) as AppState[]);

const TERMINAL: ReadonlySet<AppState> = new Set<AppState>(['SUCCEEDED', 'FAILED', 'CANCELLED']);
const STARTED: ReadonlySet<AppState> = new Set<AppState>(['SUCCEEDED', 'FAILED', 'CANCELLED', 'RUNNING']);

/**
 * True for SUCCEEDED, FAILED and CANCELLED.
 *
 * @example
 * ```ts
 * isTerminal('FAILED'); // true
 * ```
 */
export function isTerminal(state: AppState): boolean {
  return TERMINAL.has(state);
}

/** True once the app has run: RUNNING or any terminal state. */
export function isStarted(state: AppState): boolean {
  return STARTED.has(state);
}

/** True when `value` is one of the eight state names (exact case). */
export function isAppState(value: unknown): value is AppState {
  return typeof value === 'string' && Object.hasOwn(APP_STATE_VALUE, value);
}

/** The state with TorchX integer `value`, or undefined. */
export function appStateFromValue(value: number): AppState | undefined {
  return APP_STATES[value];
}

/** TorchX's `repr(state)`, e.g. `RUNNING (3)`. */
export function formatAppState(state: AppState): string {
  return `${state} (${APP_STATE_VALUE[state]})`;
}
