/**
 * Why an app is in its state, in its scheduler's own words, and since when: "pending for 40 min:
 * CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY - …" is one {@link StateReason}. Also how each finished attempt
 * ended ({@link AttemptOutcome}), so that an attempt the infrastructure ended (a Spot reclaim, a host
 * termination) is not taken for the app's failure.
 *
 * @module
 */

/** Which scheduler (or torchx-serverless itself) said it. */
export type StateReasonSource =
  | 'aws_batch'
  | 'aws_sagemaker'
  | 'slurm'
  | 'kubernetes'
  | 'local_cwd'
  | 'local_docker'
  | 'torchx-serverless';

/** The scheduler's reason for the app's current state. */
export interface StateReason {
  /** The scheduler's words, unchanged (Batch `statusReason`, SageMaker `StatusMessage`, pod condition message). */
  text: string;
  /**
   * The machine-readable part when the scheduler gives one: a Batch code (`CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY`),
   * SageMaker's `SecondaryStatus`, Slurm's `state_reason`, a pod condition reason (`Unschedulable`).
   */
  code?: string;
  /** ISO-8601 time the reason first appeared; kept while the same reason repeats. */
  since: string;
  source: StateReasonSource;
}

/** How one finished attempt of an app ended. */
export interface AttemptOutcome {
  /** 1-based attempt number. */
  attempt: number;
  exitCode?: number;
  /** The scheduler's reason for the attempt's end (Batch attempt `statusReason` and container reason). */
  reason?: string;
  /** ISO-8601. */
  startedAt?: string;
  /** ISO-8601. */
  stoppedAt?: string;
  /**
   * True when the infrastructure ended the attempt, not the app: a Spot reclaim or host termination
   * (`Host EC2 (instance i-…) terminated.`). Such an attempt is not the app's failure.
   */
  infrastructure?: boolean;
}

/** Finished attempts kept per record (the newest). */
export const MAX_ATTEMPT_OUTCOMES = 10;

/** Longest reason text kept (longer ones are cut with an ellipsis); Batch's own limit is 255 per part. */
export const MAX_REASON_TEXT = 1024;

/** True when the two reasons say the same thing (the same code and text), whatever their times. */
export function sameStateReason(a: StateReason | undefined, b: StateReason | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.text === b.text && a.code === b.code && a.source === b.source;
}

/**
 * The reason a record keeps when `next` is reported: `next`, but with `current.since` when it is the same
 * reason, so "since" is when the reason first appeared.
 */
export function carryStateReason(current: StateReason | undefined, next: StateReason): StateReason {
  return current !== undefined && sameStateReason(current, next) ? { ...next, since: current.since } : next;
}

/**
 * Builds a reason from a scheduler's text; undefined for empty text. Over-long text is cut to
 * {@link MAX_REASON_TEXT} characters.
 *
 * @param since epoch ms or an ISO-8601 string
 */
export function makeStateReason(
  source: StateReasonSource,
  text: string | undefined,
  since: number | string,
  code?: string,
): StateReason | undefined {
  const trimmed = text?.trim() ?? '';
  if (trimmed === '') return undefined;
  const cut = trimmed.length > MAX_REASON_TEXT ? `${trimmed.slice(0, MAX_REASON_TEXT - 1)}…` : trimmed;
  const reason: StateReason = {
    text: cut,
    since: typeof since === 'number' ? new Date(since).toISOString() : since,
    source,
  };
  if (code !== undefined && code !== '') reason.code = code;
  return reason;
}

/**
 * One line for a reason: `for 40m00s: CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY - Service cannot fulfill …`.
 * The code is shown only when the text does not already start with it.
 *
 * @param now epoch ms
 * @param formatAge renders how long the reason has held (the caller's duration format)
 */
export function formatStateReason(
  reason: StateReason,
  now: number,
  formatAge: (ms: number) => string,
): string {
  const since = Date.parse(reason.since);
  const age = Number.isNaN(since) ? '' : `for ${formatAge(now - since)}: `;
  const code = shownCode(reason);
  return `${age}${code === undefined ? reason.text : `${code}: ${reason.text}`}`;
}

/** The reason's code when its text does not already start with it (Batch's texts do), else undefined. */
export function shownCode(reason: StateReason): string | undefined {
  return reason.code !== undefined && !reason.text.startsWith(reason.code) ? reason.code : undefined;
}

/** One line for an attempt: `attempt 1: exit code 137, Host EC2 (instance i-…) terminated. (infrastructure, not the app's failure)`. */
export function formatAttemptOutcome(outcome: AttemptOutcome): string {
  const parts: string[] = [];
  if (outcome.exitCode !== undefined) parts.push(`exit code ${outcome.exitCode}`);
  if (outcome.reason !== undefined) parts.push(outcome.reason);
  const what = parts.length > 0 ? parts.join(', ') : 'ended';
  const blame = outcome.infrastructure ? " (ended by the infrastructure, not the app's failure)" : '';
  return `attempt ${outcome.attempt}: ${what}${blame}`;
}
