/**
 * App records: create once, read consistently, move forward by conditional transitions, mark a cancel
 * request. Every write is conditional:
 * - records are created once (`attribute_not_exists(pk)`);
 * - a transition is one conditional UpdateItem whose condition is the record's `version` (optimistic
 *   concurrency, so the bounded history is computed from exactly the item it replaces) and
 *   {@link forwardTransitionCondition}, the forward rule of `decideTransition` written as a DynamoDB
 *   condition.
 *
 * @module
 */
import type { TransitionOutcome } from '../runner/store.js';
import {
  type AppHandle,
  type AppRecord,
  type AppStateTransition,
  applyTransition,
  backoffDelay,
  decideTransition,
  type FieldIssue,
  isAppState,
  isReasonUpdate,
  isTerminal,
  type NewAppRecord,
  sleep,
  stateRank,
  UnknownAppError,
} from '../specs/index.js';
import { appItem, expiryOf, recordOf, storable } from './app-items.js';
import { boundRecord } from './bounds.js';
import {
  conditionalWrite,
  type Item,
  isExpired,
  nowSeconds,
  putIfAbsent,
  readItem,
  type StoreContext,
  writeOrCollide,
} from './context.js';
import { RecordTooLargeError, StoreConflictError } from './errors.js';
import { itemSize, MAX_ITEM_BYTES } from './item-size.js';
import { APP_SORT_KEY, appPartitionKey } from './keys.js';
import { TABLE_ATTRIBUTES as A } from './table.js';
import { requireTime, throwIfIssues, validateNewRecord } from './validation.js';

/** Sort rank of the terminal states (all share the top rank). */
const TERMINAL_RANK = stateRank('SUCCEEDED');

/** A condition expression with its placeholders. */
export interface ConditionParts {
  expression: string;
  names: Record<string, string>;
  values: Record<string, unknown>;
}

/**
 * The forward rule of `decideTransition` as a DynamoDB condition on an app item: the item exists, it is not
 * terminal (`stateRank` below the terminal rank), and the transition has a higher attempt, or the same
 * attempt and a higher state rank, or the same attempt and rank and a later event time. For a reason-only
 * update (`reasonOnly`, see `isReasonUpdate`) the item must be at the same attempt and rank instead (the
 * reason itself was compared on the item the versioned write replaces).
 *
 * @example
 * ```ts
 * const c = forwardTransitionCondition({ state: 'RUNNING', attempt: 0, eventTime: 20 });
 * // c.expression: 'attribute_exists(#pk) AND #stateRank < :terminalRank AND (#attempt < :nextAttempt OR ...)'
 * ```
 */
export function forwardTransitionCondition(
  transition: Pick<AppStateTransition, 'state' | 'attempt' | 'eventTime'>,
  reasonOnly = false,
): ConditionParts {
  return {
    expression: reasonOnly
      ? 'attribute_exists(#pk) AND #stateRank < :terminalRank AND #attempt = :nextAttempt' +
        ' AND #stateRank = :nextRank AND #lastEventTime >= :nextEventTime'
      : 'attribute_exists(#pk) AND #stateRank < :terminalRank AND (#attempt < :nextAttempt' +
        ' OR (#attempt = :nextAttempt AND #stateRank < :nextRank)' +
        ' OR (#attempt = :nextAttempt AND #stateRank = :nextRank AND #lastEventTime < :nextEventTime))',
    names: {
      '#pk': A.partitionKey,
      '#stateRank': 'stateRank',
      '#attempt': 'attempt',
      '#lastEventTime': 'lastEventTime',
    },
    values: {
      ':terminalRank': TERMINAL_RANK,
      ':nextAttempt': transition.attempt,
      ':nextRank': stateRank(transition.state),
      ':nextEventTime': transition.eventTime,
    },
  };
}

/** The wait before deciding a transition again after a concurrent writer won: under 25 ms, growing. */
const CONFLICT_BACKOFF = { baseMs: 1, capMs: 25 } as const;

/**
 * The app records' items in the table: create, get, transition, markCancelRequested (the runner's
 * `AppRecords` reads and guards records through the store; this class writes their DynamoDB items).
 */
export class AppRecordItems {
  /** Raw items behind records this store returned, so a transition can start from a record just read. */
  private readonly itemsOfRecords = new WeakMap<AppRecord, Item>();

  constructor(private readonly context: StoreContext) {}

  /**
   * Creates the record unless one exists for the handle (conditional Put).
   *
   * @throws ValidationError naming the field when the record cannot be stored (empty index keys, an app
   *   or cfg too large for a DynamoDB item).
   */
  async create(input: NewAppRecord): Promise<{ record: AppRecord; created: boolean }> {
    const record: AppRecord = storable({
      ...input,
      roles: input.roles ?? [],
      numRestarts: input.numRestarts ?? 0,
      attempt: input.attempt ?? 0,
      lastEventTime: input.lastEventTime ?? input.createdAt,
      updatedAt: input.createdAt,
      history: [],
    });
    validateNewRecord(record, () => itemSize(this.appItem(record, 1)));
    const item = this.appItem(record, 1);
    for (let attempt = 0; attempt < 3; attempt++) {
      const now = nowSeconds(this.context);
      const put = await putIfAbsent(this.context, item, now);
      if (put.applied) {
        // The item just written is current: a transition starting from this record needs no read first.
        this.itemsOfRecords.set(record, item);
        return { record, created: true };
      }
      const existing = put.existing;
      if (existing) {
        const stored = recordOf(existing);
        this.itemsOfRecords.set(stored, existing);
        return { record: stored, created: false };
      }
    }
    throw new StoreConflictError(
      `Could not create the record of ${record.handle}: it kept changing; try again`,
    );
  }

  /** The record for a handle (strongly consistent), or undefined; records past their TTL count as gone. */
  async get(handle: AppHandle): Promise<AppRecord | undefined> {
    const item = await this.getAppItem(handle);
    if (!item) return undefined;
    const record = recordOf(item);
    this.itemsOfRecords.set(record, item);
    return record;
  }

  /**
   * The TTL (epoch seconds) of the item `record` was read from, when {@link get} returned it: from then on the
   * record counts as gone. Undefined when the item has none (the app is not terminal) or `record` did not come
   * from this store's `get`.
   */
  expiresAtOf(record: AppRecord): number | undefined {
    const expiresAt = this.itemsOfRecords.get(record)?.[A.expiresAt];
    return typeof expiresAt === 'number' ? expiresAt : undefined;
  }

  /**
   * Applies a transition if `decideTransition` accepts it. Reads the record, decides, and writes the new
   * record with one UpdateItem conditioned on the version it read and on the forward rule; when another
   * writer got there first, it reads again and decides again. Concurrent transitions of one app are thus
   * applied as if delivered one after the other.
   *
   * `current`, a record this store just returned (e.g. from `findByNativeName`), saves the first read; if it
   * is no longer current the versioned write fails and the loop reads again, so it is only a hint.
   *
   * @throws StoreConflictError when it lost `maxTransitionAttempts` races in a row (nothing was written).
   * @throws ValidationError when the transition's numbers are not finite and non-negative.
   */
  async transition(
    handle: AppHandle,
    transition: AppStateTransition,
    current?: AppRecord,
  ): Promise<TransitionOutcome> {
    const issues: FieldIssue[] = [];
    if (!isAppState(transition.state))
      issues.push({ path: 'transition.state', message: 'must be an AppState' });
    requireTime(issues, 'transition.eventTime', transition.eventTime, false);
    if (!(Number.isInteger(transition.attempt) && transition.attempt >= 0)) {
      issues.push({ path: 'transition.attempt', message: 'must be a non-negative integer' });
    }
    throwIfIssues('transition', issues);

    const hint =
      current !== undefined && current.handle === handle ? this.itemsOfRecords.get(current) : undefined;
    // The item to decide from when it is already known: the hint, then the item a refused write collided with.
    let known = hint;
    for (let attempt = 0; attempt < this.context.maxTransitionAttempts; attempt++) {
      const item = known ?? (await this.getAppItem(handle));
      if (!item) return { applied: false, reason: 'missing' };
      const record = recordOf(item);
      const decision = decideTransition(record, transition);
      // Records only move forward, so an event that does not move a (possibly older) hint forward cannot
      // move the current record forward either: no fresh read is needed to turn it away.
      if (decision !== 'apply') return { applied: false, reason: decision, record };
      const next = boundRecord(storable(applyTransition(record, transition, this.context.now())), (r) =>
        itemSize(this.appItem(r, 0)),
      );
      const written = await this.writeTransition(item, next, transition, isReasonUpdate(record, transition));
      if (written.applied) {
        const { version } = written;
        const applied: TransitionOutcome = { applied: true, previous: record.state, record: next, version };
        if (record.stateReason !== undefined) applied.previousStateReason = record.stateReason;
        return applied;
      }
      // Another writer got there first: decide again from the item as it now is, which the refused write
      // answered (ALL_OLD; or one read where the answer lacks it).
      const existing = written.existing;
      if (!existing || isExpired(existing, nowSeconds(this.context)))
        return { applied: false, reason: 'missing' };
      known = existing;
      await sleep(backoffDelay(attempt, CONFLICT_BACKOFF));
    }
    throw new StoreConflictError(
      `The transition of ${handle} to ${transition.state} kept conflicting with concurrent updates; ` +
        'nothing was written, deliver it again',
    );
  }

  /**
   * Records that a cancel was requested; the first request's time is kept.
   *
   * @throws UnknownAppError when there is no record for the handle.
   */
  async markCancelRequested(handle: AppHandle, at: number): Promise<void> {
    const issues: FieldIssue[] = [];
    requireTime(issues, 'at', at, false);
    throwIfIssues('cancel request', issues);
    const { client, tableName } = this.context;
    if (
      !(await conditionalWrite(this.context, 'UpdateItem', () =>
        client.update({
          TableName: tableName,
          Key: { [A.partitionKey]: appPartitionKey(handle), [A.sortKey]: APP_SORT_KEY },
          UpdateExpression: 'SET #cancelRequestedAt = if_not_exists(#cancelRequestedAt, :at)',
          ConditionExpression: 'attribute_exists(#pk)',
          ExpressionAttributeNames: { '#pk': A.partitionKey, '#cancelRequestedAt': 'cancelRequestedAt' },
          ExpressionAttributeValues: { ':at': at },
        }),
      ))
    )
      throw new UnknownAppError(handle);
  }

  /** The item of an app record at `version`, with this store's retention. */
  private appItem(record: AppRecord, version: number): Item {
    return appItem(record, version, this.context.retentionSeconds);
  }

  /** The app item for a handle (consistent read), or undefined when absent or past its TTL. */
  private async getAppItem(handle: AppHandle): Promise<Item | undefined> {
    const key = { [A.partitionKey]: appPartitionKey(handle), [A.sortKey]: APP_SORT_KEY };
    const item = await readItem(this.context, key);
    return item && !isExpired(item, nowSeconds(this.context)) ? item : undefined;
  }

  /**
   * Writes an accepted transition: one UpdateItem conditioned on the version that was read and on the
   * forward rule. Entering a terminal state removes `activeKey` and sets `expiresAt`.
   *
   * @returns the version written, or, when the item changed since it was read, the item as it now is (the
   *   caller decides again).
   */
  private async writeTransition(
    item: Item,
    next: AppRecord,
    transition: AppStateTransition,
    reasonOnly: boolean,
  ): Promise<{ applied: true; version: number } | { applied: false; existing: Item | undefined }> {
    const version = typeof item.version === 'number' ? item.version : 0;
    const forward = forwardTransitionCondition(transition, reasonOnly);
    const names: Record<string, string> = { ...forward.names, '#version': 'version' };
    const values: Record<string, unknown> = { ...forward.values, ':version': version };
    const sets: string[] = [];
    const set = (attribute: string, value: unknown): void => {
      names[`#${attribute}`] = attribute;
      values[`:${attribute}`] = value;
      sets.push(`#${attribute} = :${attribute}`);
    };
    set('state', next.state);
    set('stateRank', stateRank(next.state));
    set('attempt', next.attempt);
    set('lastEventTime', next.lastEventTime);
    set(A.updatedAt, next.updatedAt);
    values[':nextVersion'] = version + 1;
    sets.push('#version = :nextVersion');
    // The bounded record (lib/store/bounds.ts) may have cut any of these, whatever the transition carried.
    set('history', next.history);
    set('roles', next.roles);
    if (next.historyElided !== undefined) set('historyElided', next.historyElided);
    if (next.reason !== undefined) set('reason', next.reason);
    if (transition.numRestarts !== undefined) set('numRestarts', next.numRestarts);
    if (transition.uiUrl !== undefined) set('uiUrl', next.uiUrl);
    if (next.attemptOutcomes !== undefined) set('attemptOutcomes', next.attemptOutcomes);
    const removes: string[] = [];
    if (next.stateReason !== undefined) set('stateReason', next.stateReason);
    else if (item.stateReason !== undefined) {
      names['#stateReason'] = 'stateReason';
      removes.push('#stateReason');
    }
    if (isTerminal(next.state)) {
      set(A.expiresAt, expiryOf(next.updatedAt, this.context.retentionSeconds));
      names['#activeKey'] = A.activeKey;
      removes.push('#activeKey');
    }
    const update = `SET ${sets.join(', ')}${removes.length > 0 ? ` REMOVE ${removes.join(', ')}` : ''}`;
    const size = itemSize(this.appItem(next, version + 1));
    if (size > MAX_ITEM_BYTES) {
      throw new RecordTooLargeError(
        `The record of ${next.handle} would grow to ${Math.ceil(size / 1024)} KB with this transition, over ` +
          "DynamoDB's 400 KB item limit even with its statuses bounded; nothing was written (the app or cfg is too large)",
      );
    }
    const { client, tableName } = this.context;
    const key = { [A.partitionKey]: item[A.partitionKey], [A.sortKey]: item[A.sortKey] };
    const outcome = await writeOrCollide(this.context, 'UpdateItem', key, () =>
      client.update({
        TableName: tableName,
        Key: key,
        UpdateExpression: update,
        ConditionExpression: `#version = :version AND ${forward.expression}`,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return outcome.applied ? { applied: true, version: version + 1 } : outcome;
  }
}
