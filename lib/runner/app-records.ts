/**
 * The record verbs of the Runner that need no scheduler: read an app's record, list records, apply a
 * transition. The Runner uses them; the list, status and state-change functions use them alone, so their
 * bundles carry no component, dry-run or scheduler code.
 *
 * @module
 */
import {
  type AppHandle,
  type AppRecord,
  type AppStateTransition,
  AppStatus,
  DEFAULT_SESSION,
  isTerminal,
  makeAppHandle,
  parseAppHandle,
  type StateReason,
  sleep,
  UnknownAppError,
} from '../specs/index.js';
import { recordRevision } from './revision.js';
import type {
  AppCounts,
  AppRecordStore,
  CountAppsQuery,
  ListAppsPage,
  ListAppsQuery,
  TransitionOutcome,
} from './store.js';

/** How {@link AppRecords} is built. */
export interface AppRecordsOptions {
  store: AppRecordStore;
  /** The session handles are made with; `torchx` like TorchX. */
  sessionName?: string;
  sleep?: (ms: number) => Promise<void>;
  /**
   * Waits before looking a native name up again when the name index does not have the record yet (ms;
   * default 250, 750, 2000).
   */
  lateIndexDelaysMs?: readonly number[];
}

/**
 * Tells of committed writes to app records (local mode: the server is the only writer of its store, so it
 * sees every one). The deployed stack has none: a status request there never waits.
 */
export interface RecordChanges {
  /**
   * Starts listening for the next committed write to `handle`'s record: `changed` resolves with `changed`
   * when one happens, or with `closed` when no more will be told (the server is stopping: answer now);
   * `stop` ends the listening (always call it).
   */
  next(handle: AppHandle): { changed: Promise<'changed' | 'closed'>; stop(): void };
}

/** What {@link AppRecords.getChanged} answers: the record, and whether the caller was held for a change. */
export interface ChangedRecord {
  record: AppRecord;
  /** True when the request was held until the record changed or the wait ended (a long poll). */
  waited: boolean;
}

/** What `changed` resolves with, or `timeout` after `ms`, leaving no timer behind. */
async function changedWithin(
  changed: Promise<'changed' | 'closed'>,
  ms: number,
): Promise<'changed' | 'closed' | 'timeout'> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), ms);
    timer.unref?.();
  });
  try {
    return await Promise.race([changed, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * App records over the store, without schedulers.
 *
 * @example
 * ```ts
 * const records = new AppRecords({ store });
 * const record = await records.get('aws_batch://torchx/gpu:train-k3x9', caller);
 * ```
 */
export class AppRecords {
  readonly sessionName: string;
  private readonly store: AppRecordStore;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly lateIndexDelaysMs: readonly number[];

  constructor(options: AppRecordsOptions) {
    this.store = options.store;
    this.sessionName = options.sessionName ?? DEFAULT_SESSION;
    this.sleep = options.sleep ?? sleep;
    this.lateIndexDelaysMs = options.lateIndexDelaysMs ?? [250, 750, 2000];
  }

  /**
   * The app's record. With `owner`, another owner's app is reported as unknown (404, not 403: handles are
   * not secrets, but existence is not leaked either).
   *
   * @throws UnknownAppError when there is no such app for this owner.
   */
  async get(handle: AppHandle, owner?: string): Promise<AppRecord> {
    parseAppHandle(handle);
    const record = await this.store.records.get(handle);
    if (!record || (owner !== undefined && record.owner !== owner)) throw new UnknownAppError(handle);
    return record;
  }

  /**
   * A long poll: the app's record once its revision (`recordRevision`) is no longer `seen`, or after
   * `waitMs` with the record unchanged. A terminal record is answered at once (it cannot change any more).
   * Without `changes` (the deployed stack) the record is answered at once with `waited: false`: the caller
   * then polls at its own pace.
   *
   * @throws UnknownAppError when there is no such app for this owner.
   */
  async getChanged(
    handle: AppHandle,
    owner: string | undefined,
    seen: string,
    options: { changes: RecordChanges | undefined; waitMs: number; now?: () => number },
  ): Promise<ChangedRecord> {
    const { changes } = options;
    if (changes === undefined) return { record: await this.get(handle, owner), waited: false };
    const now = options.now ?? Date.now;
    const deadline = now() + options.waitMs;
    for (;;) {
      // Listen before reading: a write that commits between the read and the wait still wakes this one.
      const next = changes.next(handle);
      try {
        const record = await this.get(handle, owner);
        const remaining = deadline - now();
        if (recordRevision(record) !== seen || isTerminal(record.state) || remaining <= 0) {
          return { record, waited: true };
        }
        if ((await changedWithin(next.changed, remaining)) === 'closed') return { record, waited: true };
      } finally {
        next.stop();
      }
    }
  }

  /** An owner's apps from the store, newest first. */
  async list(query: ListAppsQuery): Promise<ListAppsPage> {
    return this.store.queries.list(query);
  }

  /** How many of an owner's apps are in each state, from the store (at most `APP_COUNT_CAP` records read). */
  async countByState(query: CountAppsQuery): Promise<AppCounts> {
    return this.store.queries.countByState(query);
  }

  /**
   * Applies a transition to a record. The single path for submissions, EventBridge events, local scheduler
   * events, refreshes and the reconciler. Publishes nothing: the `AppState Change` event is produced from
   * the committed record change (the table's stream; the local outbox in local mode).
   */
  async applyTransition(
    handle: AppHandle,
    transition: AppStateTransition,
    current?: AppRecord,
  ): Promise<TransitionOutcome> {
    return this.store.records.transition(handle, transition, current);
  }

  /**
   * Routes a scheduler-native transition (an EventBridge event, a local process exit) to the app's record.
   * The name index is eventually consistent: an event that arrives right after the submission may not find
   * the new record yet, so a miss is looked up again after each of `lateIndexDelaysMs` before the event is
   * taken as foreign. `onIndexMiss` is told about every miss (for a metric).
   *
   * When the event names the app id (`appId`), the record is read by key (one consistent read, then one
   * conditional write when the event moves it forward, none for a duplicate); the name index is asked only
   * when there is no record under that key.
   *
   * @returns undefined when the app was not launched by us (no record): such events are ignored.
   */
  async applyNativeTransition(
    scheduler: string,
    nativeName: string,
    transition: AppStateTransition,
    observe: { onIndexMiss?: (lookup: number, last: boolean) => void; appId?: string } = {},
  ): Promise<TransitionOutcome | undefined> {
    if (observe.appId !== undefined && observe.appId !== '') {
      const byKey = await this.store.records.transition(
        makeAppHandle(scheduler, this.sessionName, observe.appId),
        transition,
      );
      if (byKey.applied || byKey.reason !== 'missing') return byKey;
    }
    let record = await this.store.queries.findByNativeName(scheduler, nativeName);
    for (let i = 0; !record; i++) {
      const delay = this.lateIndexDelaysMs[i];
      observe.onIndexMiss?.(i + 1, delay === undefined);
      if (delay === undefined) return undefined;
      await this.sleep(delay);
      record = await this.store.queries.findByNativeName(scheduler, nativeName);
    }
    return this.applyTransition(record.handle, transition, record);
  }

  /**
   * Gives every waiting (SUBMITTED or PENDING) app of `scheduler` that `matches` the reason it waits for,
   * as a reason-only update of its current state (a "Batch Job Queue Blocked" event: the apps behind the
   * blocked job wait for the same reason). Apps that moved on meanwhile are left alone; an app already
   * showing this reason keeps its since-when. Reads at most {@link WAITING_SCAN_CAP} active records.
   *
   * @returns how many records took the reason.
   */
  async applyWaitingReason(
    scheduler: string,
    matches: (appId: string) => boolean,
    stateReason: StateReason,
  ): Promise<number> {
    let applied = 0;
    let nextToken: string | undefined;
    for (let read = 0; read < WAITING_SCAN_CAP; ) {
      const page = await this.store.queries.listActive(scheduler, 100, nextToken);
      read += Math.max(page.records.length, 1);
      for (const record of page.records) {
        if ((record.state !== 'PENDING' && record.state !== 'SUBMITTED') || !matches(record.appId)) continue;
        const outcome = await this.store.records.transition(
          record.handle,
          {
            state: record.state,
            attempt: record.attempt,
            eventTime: record.lastEventTime,
            source: 'event',
            stateReason,
          },
          record,
        );
        if (outcome.applied) applied += 1;
      }
      nextToken = page.nextToken;
      if (nextToken === undefined) break;
    }
    return applied;
  }
}

/** Active records read at most by one {@link AppRecords.applyWaitingReason} (pages of 100). */
const WAITING_SCAN_CAP = 1_000;

/** The AppStatus a record stands for. */
export function statusOfRecord(record: AppRecord): AppStatus {
  const init: ConstructorParameters<typeof AppStatus>[0] = {
    state: record.state,
    numRestarts: record.numRestarts,
    msg: record.reason ?? '',
    roles: record.roles,
  };
  if (record.uiUrl !== undefined) init.uiUrl = record.uiUrl;
  if (record.stateReason !== undefined) init.stateReason = record.stateReason;
  if (record.attemptOutcomes !== undefined && record.attemptOutcomes.length > 0)
    init.attemptOutcomes = record.attemptOutcomes;
  return new AppStatus(init);
}
