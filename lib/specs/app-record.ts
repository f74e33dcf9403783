/**
 * The app record kept for every submitted app, and the rule that orders state transitions. Events arrive
 * at least once and in any order; {@link decideTransition} accepts a transition only when it moves the app
 * forward, so duplicates and late events are no-ops and a terminal state is never left.
 *
 * @module
 */
import type { AppDef } from './app-def.js';
import type { AppHandle } from './app-handle.js';
import { type AppState, isTerminal } from './app-state.js';
import type { Cfg } from './run-opts.js';
import {
  type AttemptOutcome,
  carryStateReason,
  MAX_ATTEMPT_OUTCOMES,
  type StateReason,
  sameStateReason,
} from './state-reason.js';
import type { RoleStatus } from './status.js';

/** Where a transition came from. */
export type TransitionSource = 'submit' | 'event' | 'describe' | 'cancel' | 'local';

/** A state change reported for an app. */
export interface AppStateTransition {
  state: AppState;
  /** When the scheduler says the change happened (epoch ms). */
  eventTime: number;
  /**
   * Monotonic progress counter: AWS Batch's number of finished attempts, the length of SageMaker's
   * SecondaryStatusTransitions, or the local scheduler's restart count. A higher counter is forward even
   * when the state looks earlier (a Batch retry goes RUNNING → RUNNABLE with one more attempt).
   */
  attempt: number;
  source: TransitionSource;
  /** Why, in the scheduler's words (statusReason, FailureReason, exit code). */
  reason?: string;
  /**
   * The scheduler's reason for the state, with its code and since-when. A transition that carries only a
   * new reason for the same state is still applied (see {@link isReasonUpdate}).
   */
  stateReason?: StateReason;
  /** How each finished attempt ended, oldest first (Batch `attempts[]`). */
  attemptOutcomes?: AttemptOutcome[];
  numRestarts?: number;
  roles?: RoleStatus[];
  uiUrl?: string;
}

/** One accepted transition in a record's history. */
export interface HistoryEntry {
  from: AppState;
  to: AppState;
  /** Epoch ms of the event. */
  time: number;
  source: TransitionSource;
  reason?: string;
}

/**
 * Most history entries kept per record: the first {@link HISTORY_HEAD} (how the app started) and the newest
 * ones; the entries dropped in between are counted in `historyElided`.
 */
export const MAX_HISTORY = 50;
/** History entries kept from the start of a record's history once it is longer than {@link MAX_HISTORY}. */
export const HISTORY_HEAD = 5;

/** The workspace archive an app runs in (`txs run --workspace`): its content address, size and files. */
export interface WorkspaceSummary {
  /** SHA-256 (hex) of the archive's bytes. */
  sha256: string;
  /** Bytes of the archive. */
  size: number;
  /** Regular files in the archive. */
  fileCount: number;
}

/**
 * A workspace as a scheduler receives it with a dry run or a run (TorchX passes its `workspace` beside `cfg`):
 * the recorded summary and where the job fetches the archive from.
 */
export interface JobWorkspace extends WorkspaceSummary {
  /**
   * Where the archive (`<sha256>.tar.gz`) is: an `s3://bucket/key` URI (a stack's workspace bucket), or an
   * absolute path on the server's machine (the local server's data directory). A scheduler that cannot reach
   * the kind it is given refuses the workspace with a ValidationError.
   */
  archive: string;
}

/** The record the store keeps for one app handle. */
export interface AppRecord {
  handle: AppHandle;
  scheduler: string;
  session: string;
  appId: string;
  /** The name the backend knows the app by (see `Scheduler.nativeNameOf`); routes state-change events. */
  nativeName: string;
  /** Who launched it (IAM principal ARN, or the local user). */
  owner: string;
  /** The app's name. */
  name: string;
  app: AppDef;
  cfg: Cfg;
  /** The workspace the app's replicas start in, next to its image (absent: none was given). */
  workspace?: WorkspaceSummary;
  state: AppState;
  reason?: string;
  /** The scheduler's reason for the current state and since when (absent: it gave none). */
  stateReason?: StateReason;
  /** How each finished attempt ended (the newest {@link MAX_ATTEMPT_OUTCOMES}). */
  attemptOutcomes?: AttemptOutcome[];
  numRestarts: number;
  roles: RoleStatus[];
  uiUrl?: string;
  /** Progress counter of the last accepted transition. */
  attempt: number;
  /** Event time of the last accepted transition (epoch ms). */
  lastEventTime: number;
  /** Epoch ms. */
  createdAt: number;
  /** Epoch ms. */
  updatedAt: number;
  history: HistoryEntry[];
  /** History entries dropped between the first {@link HISTORY_HEAD} and the newest (absent: none). */
  historyElided?: number;
  idempotencyKey?: string;
  /** Set when a cancel was requested (epoch ms). */
  cancelRequestedAt?: number;
}

/** Ordering rank of a state: UNKNOWN lowest, then UNSUBMITTED … RUNNING, then the terminal states. */
export function stateRank(state: AppState): number {
  switch (state) {
    case 'UNKNOWN':
      return -1;
    case 'UNSUBMITTED':
      return 0;
    case 'SUBMITTED':
      return 1;
    case 'PENDING':
      return 2;
    case 'RUNNING':
      return 3;
    case 'SUCCEEDED':
    case 'FAILED':
    case 'CANCELLED':
      return 4;
  }
}

/** What to do with a transition. */
export type TransitionDecision = 'apply' | 'duplicate' | 'stale' | 'terminal';

/** The part of a record that orders transitions. */
export interface TransitionPosition {
  state: AppState;
  attempt: number;
  lastEventTime: number;
  stateReason?: StateReason;
}

/**
 * True when `next` reports the same state and attempt as `current`, at no later event time, but a different
 * reason that appeared later than the current one (or the first one): a reason-only update. Two different
 * reasons with the same time are not ordered: the first one delivered stays. Batch reports every state
 * before RUNNING with the same event time (`createdAt`), so a RUNNABLE job that becomes blocked for lack of
 * capacity differs only in its `statusReason`.
 */
export function isReasonUpdate(current: TransitionPosition, next: AppStateTransition): boolean {
  if (next.state !== current.state || next.attempt !== current.attempt) return false;
  if (next.eventTime > current.lastEventTime || next.stateReason === undefined) return false;
  if (sameStateReason(current.stateReason, next.stateReason)) return false;
  if (current.stateReason === undefined) return true;
  const since = Date.parse(current.stateReason.since);
  return Number.isNaN(since) || Date.parse(next.stateReason.since) > since;
}

/**
 * Decides whether `next` moves an app forward from `current`:
 * - `terminal`: the app is already SUCCEEDED, FAILED or CANCELLED; nothing changes it;
 * - `apply`: a higher attempt; or the same attempt and a higher state rank; or the same attempt and rank
 *   with a later event time (fresher details, e.g. replica statuses); or a reason-only update
 *   ({@link isReasonUpdate});
 * - `duplicate`: the same attempt, rank and event time;
 * - `stale`: anything older.
 *
 * @example
 * ```ts
 * decideTransition({ state: 'RUNNING', attempt: 0, lastEventTime: 10 },
 *   { state: 'PENDING', attempt: 1, eventTime: 20, source: 'event' }); // 'apply' (a Batch retry)
 * ```
 */
export function decideTransition(current: TransitionPosition, next: AppStateTransition): TransitionDecision {
  if (isTerminal(current.state)) return 'terminal';
  if (next.attempt !== current.attempt) return next.attempt > current.attempt ? 'apply' : 'stale';
  const rankDelta = stateRank(next.state) - stateRank(current.state);
  if (rankDelta !== 0) return rankDelta > 0 ? 'apply' : 'stale';
  if (next.eventTime > current.lastEventTime || isReasonUpdate(current, next)) return 'apply';
  return next.eventTime === current.lastEventTime ? 'duplicate' : 'stale';
}

/** The parts of a record for a new submission. */
export type NewAppRecord = Omit<
  AppRecord,
  'history' | 'updatedAt' | 'attempt' | 'lastEventTime' | 'roles' | 'numRestarts'
> &
  Partial<Pick<AppRecord, 'roles' | 'numRestarts' | 'attempt' | 'lastEventTime'>>;

/**
 * Applies an accepted transition to a record (pure; returns a new record). Callers decide first with
 * {@link decideTransition}.
 */
export function applyTransition(record: AppRecord, t: AppStateTransition, now: number): AppRecord {
  const next: AppRecord = {
    ...record,
    state: t.state,
    attempt: t.attempt,
    // A reason-only update reports no later event time: the record's stays.
    lastEventTime: isReasonUpdate(record, t) ? record.lastEventTime : t.eventTime,
    updatedAt: now,
  };
  if (t.reason !== undefined) next.reason = t.reason;
  if (t.stateReason !== undefined) next.stateReason = carryStateReason(record.stateReason, t.stateReason);
  // A new state or attempt without a reason: the old reason no longer holds.
  else if (record.state !== t.state || record.attempt !== t.attempt) delete next.stateReason;
  if (t.attemptOutcomes !== undefined) next.attemptOutcomes = t.attemptOutcomes.slice(-MAX_ATTEMPT_OUTCOMES);
  if (t.numRestarts !== undefined) next.numRestarts = t.numRestarts;
  if (t.roles !== undefined) next.roles = t.roles;
  if (t.uiUrl !== undefined) next.uiUrl = t.uiUrl;
  if (record.state !== t.state) {
    const entry: HistoryEntry = { from: record.state, to: t.state, time: t.eventTime, source: t.source };
    if (t.reason !== undefined) entry.reason = t.reason;
    const history = [...record.history, entry];
    const excess = history.length - MAX_HISTORY;
    if (excess > 0) {
      history.splice(HISTORY_HEAD, excess);
      next.historyElided = (record.historyElided ?? 0) + excess;
    }
    next.history = history;
  }
  return next;
}
