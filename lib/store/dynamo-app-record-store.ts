/**
 * The DynamoDB implementation of the runner's {@link AppRecordStore}. Every write is conditional:
 * - records are created once (`attribute_not_exists(pk)`);
 * - a transition is one conditional UpdateItem whose condition is the record's `version` (optimistic
 *   concurrency, so the bounded history is computed from exactly the item it replaces) and
 *   {@link forwardTransitionCondition}, the forward rule of `decideTransition` written as a DynamoDB
 *   condition;
 * - idempotency keys are reserved with a conditional Put, so exactly one concurrent caller wins.
 *
 * Lists are Queries on global secondary indexes; nothing here scans the table.
 *
 * @module
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DeleteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  type QueryCommandInput,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import {
  ALL_OWNERS,
  type AppRecordStore,
  type IdempotencyReservation,
  type ListAppsPage,
  type ListAppsQuery,
  type TransitionOutcome,
} from '../runner/store.js';
import {
  type AppHandle,
  type AppRecord,
  type AppStateTransition,
  applyTransition,
  decideTransition,
  type FieldIssue,
  isAppState,
  isTerminal,
  type NewAppRecord,
  parseAppHandle,
  stateRank,
  UnknownAppError,
  ValidationError,
} from '../specs/index.js';
import {
  IdempotencyReservationError,
  isConditionalCheckFailed,
  RecordTooLargeError,
  StoreConflictError,
  toStoreError,
} from './errors.js';
import { attributeValueSize, itemSize, MAX_ITEM_BYTES } from './item-size.js';
import {
  APP_SORT_KEY,
  appPartitionKey,
  createdAtPrefix,
  createdSortKey,
  decodePageCursor,
  encodePageCursor,
  handleOfCreatedKey,
  IDEMPOTENCY_SORT_KEY,
  idempotencyPartitionKey,
  nativeKeyOf,
} from './keys.js';
import { TABLE_ATTRIBUTES as A, ALL_APPS_KEY, TABLE_INDEXES } from './table.js';

/** Days a finished (terminal) record is kept before DynamoDB's TTL deletes it. */
export const DEFAULT_RETENTION_DAYS = 90;
/** Seconds an idempotency reservation is kept. */
export const DEFAULT_IDEMPOTENCY_TTL_SECONDS = 24 * 60 * 60;
/** Page size of {@link DynamoAppRecordStore.list} and `listActive` when none is given. */
export const DEFAULT_PAGE_SIZE = 50;
/** Largest page size. */
export const MAX_PAGE_SIZE = 100;
/**
 * Largest record accepted by `create` (300 KB): DynamoDB items are limited to 400 KB, and the rest is kept
 * for the status history, replica statuses and reasons that transitions add.
 */
export const MAX_NEW_RECORD_BYTES = 300 * 1024;
/** Longest idempotency key. */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;
/** Longest handle in bytes (it is part of an index sort key, which DynamoDB limits to 1024 bytes). */
export const MAX_HANDLE_BYTES = 1000;

/** Query pages read by one `list` call at most before it returns what it has with a `nextToken`. */
const MAX_QUERY_PAGES_PER_CALL = 10;
/** Items read per Query page when filters are set (DynamoDB applies `Limit` before the filter). */
const FILTERED_QUERY_BATCH = 200;
/** Sort rank of the terminal states (all share the top rank). */
const TERMINAL_RANK = stateRank('SUCCEEDED');
/** `entity` attribute values, so items are self-describing in the single table. */
const APP_ENTITY = 'App';
const IDEMPOTENCY_ENTITY = 'Idempotency';

/** Options of {@link DynamoAppRecordStore}. */
export interface DynamoAppRecordStoreOptions {
  /** The app record table (created from `createTableInput`). */
  tableName: string;
  /**
   * The document client to use. Defaults to one shared client built on first use from the environment
   * (region, credentials, `AWS_ENDPOINT_URL_DYNAMODB`).
   */
  documentClient?: DynamoDBDocumentClient;
  /** Days a terminal record is kept before TTL deletes it (default {@link DEFAULT_RETENTION_DAYS}). */
  retentionDays?: number;
  /** Seconds an idempotency reservation is kept (default {@link DEFAULT_IDEMPOTENCY_TTL_SECONDS}). */
  idempotencyTtlSeconds?: number;
  /** Clock (epoch ms) for `updatedAt`, TTLs and hiding expired items. Defaults to `Date.now`. */
  now?: () => number;
  /**
   * Attempts of a transition that keeps losing races with concurrent transitions of the same app before
   * it fails with {@link StoreConflictError} (default 20).
   */
  maxTransitionAttempts?: number;
}

let sharedDocumentClient: DynamoDBDocumentClient | undefined;

/** The default document client, built once per process. */
function defaultDocumentClient(): DynamoDBDocumentClient {
  sharedDocumentClient ??= DynamoDBDocumentClient.from(new DynamoDBClient({}), {
    marshallOptions: { removeUndefinedValues: true },
  });
  return sharedDocumentClient;
}

/** Every {@link AppRecord} field (the compiler checks the list is complete). */
const RECORD_FIELDS = Object.keys({
  handle: true,
  scheduler: true,
  session: true,
  appId: true,
  nativeName: true,
  owner: true,
  name: true,
  app: true,
  cfg: true,
  state: true,
  reason: true,
  numRestarts: true,
  roles: true,
  uiUrl: true,
  attempt: true,
  lastEventTime: true,
  createdAt: true,
  updatedAt: true,
  history: true,
  idempotencyKey: true,
  cancelRequestedAt: true,
} satisfies Record<keyof AppRecord, true>) as (keyof AppRecord)[];

type Item = Record<string, unknown>;

/** A deep copy with `undefined` dropped, as DynamoDB stores it (values here are JSON data). */
function storable<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** The record held by an app item. */
function recordOf(item: Item): AppRecord {
  const record: Partial<Record<keyof AppRecord, unknown>> = {};
  for (const field of RECORD_FIELDS) {
    if (item[field] !== undefined) record[field] = item[field];
  }
  return record as AppRecord;
}

/** A condition expression with its placeholders. */
export interface ConditionParts {
  expression: string;
  names: Record<string, string>;
  values: Record<string, unknown>;
}

/**
 * The forward rule of `decideTransition` as a DynamoDB condition on an app item: the item exists, it is not
 * terminal (`stateRank` below the terminal rank), and the transition has a higher attempt, or the same
 * attempt and a higher state rank, or the same attempt and rank and a later event time.
 *
 * @example
 * ```ts
 * const c = forwardTransitionCondition({ state: 'RUNNING', attempt: 0, eventTime: 20 });
 * // c.expression: 'attribute_exists(#pk) AND #stateRank < :terminalRank AND (#attempt < :nextAttempt OR ...)'
 * ```
 */
export function forwardTransitionCondition(
  transition: Pick<AppStateTransition, 'state' | 'attempt' | 'eventTime'>,
): ConditionParts {
  return {
    expression:
      'attribute_exists(#pk) AND #stateRank < :terminalRank AND (#attempt < :nextAttempt' +
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

function requireText(issues: FieldIssue[], path: string, value: unknown, maxBytes: number): void {
  if (typeof value !== 'string' || value === '') {
    issues.push({ path, message: 'must be a non-empty string' });
  } else if (Buffer.byteLength(value, 'utf8') > maxBytes) {
    issues.push({ path, message: `must be at most ${maxBytes} bytes` });
  }
}

function requireTime(issues: FieldIssue[], path: string, value: unknown, integer: boolean): void {
  if (
    typeof value !== 'number' ||
    !Number.isFinite(value) ||
    value < 0 ||
    (integer && !Number.isInteger(value))
  ) {
    issues.push({ path, message: `must be a non-negative ${integer ? 'integer' : 'number'} (epoch ms)` });
  }
}

function throwIfIssues(what: string, issues: readonly FieldIssue[]): void {
  if (issues.length === 0) return;
  const detail = issues.map((issue) => `${issue.path}: ${issue.message}`).join('; ');
  throw new ValidationError(`Invalid ${what}: ${detail}`, issues);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * App records in one DynamoDB table (see `lib/store/table.ts` for the layout).
 *
 * @example
 * ```ts
 * const store = new DynamoAppRecordStore({ tableName: 'txs-apps', documentClient });
 * const { created } = await store.create(newRecord);
 * await store.transition(newRecord.handle, { state: 'RUNNING', attempt: 0, eventTime: Date.now(), source: 'event' });
 * ```
 */
export class DynamoAppRecordStore implements AppRecordStore {
  /** Raw items behind records this store returned, so a transition can start from a record just read. */
  private readonly itemsOfRecords = new WeakMap<AppRecord, Item>();
  readonly tableName: string;
  private readonly client: DynamoDBDocumentClient;
  private readonly retentionSeconds: number;
  private readonly idempotencyTtlSeconds: number;
  private readonly now: () => number;
  private readonly maxTransitionAttempts: number;

  /** @throws ValidationError when an option is out of range. */
  constructor(options: DynamoAppRecordStoreOptions) {
    const issues: FieldIssue[] = [];
    requireText(issues, 'tableName', options.tableName, 255);
    const retentionDays = options.retentionDays ?? DEFAULT_RETENTION_DAYS;
    if (!(Number.isFinite(retentionDays) && retentionDays > 0)) {
      issues.push({ path: 'retentionDays', message: 'must be a positive number of days' });
    }
    const idempotencyTtlSeconds = options.idempotencyTtlSeconds ?? DEFAULT_IDEMPOTENCY_TTL_SECONDS;
    if (!(Number.isInteger(idempotencyTtlSeconds) && idempotencyTtlSeconds > 0)) {
      issues.push({ path: 'idempotencyTtlSeconds', message: 'must be a positive whole number of seconds' });
    }
    const maxTransitionAttempts = options.maxTransitionAttempts ?? 20;
    if (!(Number.isInteger(maxTransitionAttempts) && maxTransitionAttempts > 0)) {
      issues.push({ path: 'maxTransitionAttempts', message: 'must be a positive integer' });
    }
    throwIfIssues('store options', issues);
    this.tableName = options.tableName;
    this.client = options.documentClient ?? defaultDocumentClient();
    this.retentionSeconds = Math.round(retentionDays * 24 * 60 * 60);
    this.idempotencyTtlSeconds = idempotencyTtlSeconds;
    this.now = options.now ?? Date.now;
    this.maxTransitionAttempts = maxTransitionAttempts;
  }

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
    this.validateNewRecord(record);
    const item = this.appItem(record, 1);
    for (let attempt = 0; attempt < 3; attempt++) {
      if (await this.putIfAbsent(item, this.nowSeconds())) return { record, created: true };
      const existing = await this.get(record.handle);
      if (existing) return { record: existing, created: false };
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
   * The newest record the scheduler knows by `nativeName`: a keys-only Query on `byNativeName`, then a
   * consistent read of the record.
   */
  async findByNativeName(scheduler: string, nativeName: string): Promise<AppRecord | undefined> {
    if (scheduler === '' || nativeName === '') return undefined;
    const output = await this.call('Query', () =>
      this.client.send(
        new QueryCommand({
          TableName: this.tableName,
          IndexName: TABLE_INDEXES.byNativeName,
          KeyConditionExpression: '#nativeKey = :nativeKey',
          ExpressionAttributeNames: { '#nativeKey': A.nativeKey },
          ExpressionAttributeValues: { ':nativeKey': nativeKeyOf(scheduler, nativeName) },
          ScanIndexForward: false,
          Limit: 1,
        }),
      ),
    );
    const createdKey = output.Items?.[0]?.[A.createdKey];
    if (typeof createdKey !== 'string') return undefined;
    return this.get(handleOfCreatedKey(createdKey));
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
    for (let attempt = 0; attempt < this.maxTransitionAttempts; attempt++) {
      const item = attempt === 0 && hint !== undefined ? hint : await this.getAppItem(handle);
      if (!item) return { applied: false, reason: 'missing' };
      const record = recordOf(item);
      const decision = decideTransition(record, transition);
      // Records only move forward, so an event that does not move a (possibly older) hint forward cannot
      // move the current record forward either: no fresh read is needed to turn it away.
      if (decision !== 'apply') return { applied: false, reason: decision, record };
      const next = storable(applyTransition(record, transition, this.now()));
      if (await this.writeTransition(item, record, next, transition)) {
        return { applied: true, previous: record.state, record: next };
      }
      await sleep(Math.random() * Math.min(25, 2 ** attempt));
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
    try {
      await this.call('UpdateItem', () =>
        this.client.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: { [A.partitionKey]: appPartitionKey(handle), [A.sortKey]: APP_SORT_KEY },
            UpdateExpression: 'SET #cancelRequestedAt = if_not_exists(#cancelRequestedAt, :at)',
            ConditionExpression: 'attribute_exists(#pk)',
            ExpressionAttributeNames: { '#pk': A.partitionKey, '#cancelRequestedAt': 'cancelRequestedAt' },
            ExpressionAttributeValues: { ':at': at },
          }),
        ),
      );
    } catch (error) {
      if (isConditionalCheckFailed(error)) throw new UnknownAppError(handle);
      throw error;
    }
  }

  /**
   * Lists an owner's records (every owner's with {@link ALL_OWNERS}: the `byCreated` index), newest first: a
   * Query on `byOwner` (`since` is a key condition; scheduler,
   * states (empty means any) and session are filters). It keeps reading until `limit` records match or the index is
   * exhausted, reading at most 10 Query pages per call; a shorter page with a `nextToken` means "more may
   * follow".
   *
   * @throws ValidationError naming `owner`, `limit`, `states`, `since` or `nextToken`.
   */
  async list(query: ListAppsQuery): Promise<ListAppsPage> {
    const issues: FieldIssue[] = [];
    const all = query.owner === ALL_OWNERS;
    if (query.owner !== ALL_OWNERS) requireText(issues, 'owner', query.owner, 1024);
    const limit = this.pageSize(issues, query.limit);
    if (query.since !== undefined) requireTime(issues, 'since', query.since, false);
    query.states?.forEach((state, i) => {
      if (!isAppState(state)) {
        issues.push({ path: `states.${i}`, message: `'${String(state)}' is not an AppState` });
      }
    });
    if (query.scheduler !== undefined && typeof query.scheduler !== 'string') {
      issues.push({ path: 'scheduler', message: 'must be a string' });
    }
    if (query.session !== undefined && typeof query.session !== 'string') {
      issues.push({ path: 'session', message: 'must be a string' });
    }
    throwIfIssues('list query', issues);
    const cursor = query.nextToken === undefined ? undefined : decodePageCursor(query.nextToken, 'byOwner');
    const sinceKey = query.since === undefined ? undefined : createdAtPrefix(query.since);
    if (cursor && sinceKey !== undefined && cursor.createdKey < sinceKey) return { records: [] };

    const partitionAttribute = all ? A.allKey : A.ownerKey;
    const partitionValue = query.owner === ALL_OWNERS ? ALL_APPS_KEY : query.owner;
    const names: Record<string, string> = { '#ownerKey': partitionAttribute, '#expiresAt': A.expiresAt };
    const values: Record<string, unknown> = { ':owner': partitionValue, ':nowSeconds': this.nowSeconds() };
    let keyCondition = '#ownerKey = :owner';
    if (sinceKey !== undefined) {
      keyCondition += ' AND #createdKey >= :since';
      names['#createdKey'] = A.createdKey;
      values[':since'] = sinceKey;
    }
    const filters = ['(attribute_not_exists(#expiresAt) OR #expiresAt > :nowSeconds)'];
    if (query.scheduler !== undefined) {
      filters.push('#scheduler = :scheduler');
      names['#scheduler'] = 'scheduler';
      values[':scheduler'] = query.scheduler;
    }
    if (query.session !== undefined) {
      filters.push('#session = :session');
      names['#session'] = 'session';
      values[':session'] = query.session;
    }
    const states = [...new Set(query.states ?? [])];
    if (states.length > 0) {
      names['#state'] = 'state';
      states.forEach((state, i) => {
        values[`:state${i}`] = state;
      });
      filters.push(`#state IN (${states.map((_, i) => `:state${i}`).join(', ')})`);
    }
    const filtered = query.scheduler !== undefined || query.session !== undefined || states.length > 0;
    return this.collectPages({
      base: {
        TableName: this.tableName,
        IndexName: all ? TABLE_INDEXES.byCreated : TABLE_INDEXES.byOwner,
        KeyConditionExpression: keyCondition,
        FilterExpression: filters.join(' AND '),
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
        ScanIndexForward: false,
      },
      limit,
      batch: filtered ? FILTERED_QUERY_BATCH : 0,
      startKey: cursor && {
        [partitionAttribute]: partitionValue,
        [A.createdKey]: cursor.createdKey,
        [A.partitionKey]: appPartitionKey(handleOfCreatedKey(cursor.createdKey)),
        [A.sortKey]: APP_SORT_KEY,
      },
      tokenOf: (key) => {
        const createdKey = key[A.createdKey];
        return typeof createdKey === 'string'
          ? encodePageCursor({ index: 'byOwner', createdKey })
          : undefined;
      },
    });
  }

  /**
   * Non-terminal records of a scheduler, least recently updated first: a Query on the sparse `byActive`
   * index (a record leaves it when it reaches a terminal state).
   *
   * @throws ValidationError naming `scheduler`, `limit` or `nextToken`.
   */
  async listActive(scheduler: string, limit?: number, nextToken?: string): Promise<ListAppsPage> {
    const issues: FieldIssue[] = [];
    requireText(issues, 'scheduler', scheduler, 1024);
    const pageSize = this.pageSize(issues, limit);
    throwIfIssues('active app query', issues);
    const cursor = nextToken === undefined ? undefined : decodePageCursor(nextToken, 'byActive');
    return this.collectPages({
      base: {
        TableName: this.tableName,
        IndexName: TABLE_INDEXES.byActive,
        KeyConditionExpression: '#activeKey = :scheduler',
        ExpressionAttributeNames: { '#activeKey': A.activeKey },
        ExpressionAttributeValues: { ':scheduler': scheduler },
        ScanIndexForward: true,
      },
      limit: pageSize,
      batch: 0,
      startKey: cursor && {
        [A.activeKey]: scheduler,
        [A.updatedAt]: cursor.updatedAt,
        // The byActive cursor carries the item's partition key itself.
        [A.partitionKey]: cursor.handle,
        [A.sortKey]: APP_SORT_KEY,
      },
      tokenOf: (key) => {
        const updatedAt = key[A.updatedAt];
        const pk = key[A.partitionKey];
        if (typeof updatedAt !== 'number' || typeof pk !== 'string') return undefined;
        return encodePageCursor({ index: 'byActive', updatedAt, handle: pk });
      },
    });
  }

  /**
   * Reserves `key` for `owner` with a conditional Put. Exactly one concurrent caller gets
   * `reserved: true`; the others get the reservation as stored (with the handle once completed).
   * Reservations expire after the idempotency TTL (24 h by default).
   *
   * @throws ValidationError naming `idempotencyKey`, `owner` or `requestHash`.
   */
  async reserveIdempotencyKey(
    owner: string,
    key: string,
    requestHash: string,
    now: number,
  ): Promise<IdempotencyReservation> {
    const issues: FieldIssue[] = [];
    requireText(issues, 'owner', owner, 1024);
    this.validateIdempotencyKey(issues, key);
    requireText(issues, 'requestHash', requestHash, 1024);
    requireTime(issues, 'now', now, false);
    throwIfIssues('idempotency reservation', issues);
    const nowSeconds = Math.floor(now / 1000);
    const item: Item = {
      [A.partitionKey]: idempotencyPartitionKey(owner, key),
      [A.sortKey]: IDEMPOTENCY_SORT_KEY,
      entity: IDEMPOTENCY_ENTITY,
      owner,
      idempotencyKey: key,
      requestHash,
      reservedAt: now,
      [A.expiresAt]: nowSeconds + this.idempotencyTtlSeconds,
    };
    for (let attempt = 0; attempt < 5; attempt++) {
      if (await this.putIfAbsent(item, nowSeconds)) return { reserved: true };
      const existing = await this.getIdempotencyItem(owner, key);
      const expiresAt = existing?.[A.expiresAt];
      if (existing && !(typeof expiresAt === 'number' && expiresAt <= nowSeconds)) {
        const reservation: IdempotencyReservation = {
          reserved: false,
          requestHash: String(existing.requestHash),
          reservedAt: Number(existing.reservedAt),
        };
        if (typeof existing.handle === 'string') reservation.handle = existing.handle;
        return reservation;
      }
      // Released or expired between our Put and our read: try to reserve again.
    }
    throw new StoreConflictError(
      `Idempotency key '${key}' kept being reserved and released concurrently; try again`,
    );
  }

  /**
   * Attaches the submitted app's handle to a reservation (idempotent for the same handle).
   *
   * @throws IdempotencyReservationError when the reservation is gone or bound to another handle.
   */
  async completeIdempotencyKey(owner: string, key: string, handle: AppHandle): Promise<void> {
    const issues: FieldIssue[] = [];
    requireText(issues, 'owner', owner, 1024);
    this.validateIdempotencyKey(issues, key);
    requireText(issues, 'handle', handle, MAX_HANDLE_BYTES);
    throwIfIssues('idempotency completion', issues);
    try {
      await this.call('UpdateItem', () =>
        this.client.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: { [A.partitionKey]: idempotencyPartitionKey(owner, key), [A.sortKey]: IDEMPOTENCY_SORT_KEY },
            UpdateExpression: 'SET #handle = :handle',
            ConditionExpression:
              'attribute_exists(#pk) AND (attribute_not_exists(#handle) OR #handle = :handle)',
            ExpressionAttributeNames: { '#pk': A.partitionKey, '#handle': 'handle' },
            ExpressionAttributeValues: { ':handle': handle },
          }),
        ),
      );
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
      const existing = await this.getIdempotencyItem(owner, key);
      throw new IdempotencyReservationError(
        existing
          ? `Idempotency key '${key}' is already bound to ${String(existing.handle)}, not ${handle}`
          : `Idempotency key '${key}' has no reservation to complete (it expired or was released); ` +
              `${handle} was submitted without one`,
      );
    }
  }

  /** Drops a reservation whose submission failed. A completed reservation (with a handle) is kept. */
  async releaseIdempotencyKey(owner: string, key: string): Promise<void> {
    const issues: FieldIssue[] = [];
    requireText(issues, 'owner', owner, 1024);
    this.validateIdempotencyKey(issues, key);
    throwIfIssues('idempotency release', issues);
    try {
      await this.call('DeleteItem', () =>
        this.client.send(
          new DeleteCommand({
            TableName: this.tableName,
            Key: { [A.partitionKey]: idempotencyPartitionKey(owner, key), [A.sortKey]: IDEMPOTENCY_SORT_KEY },
            ConditionExpression: 'attribute_not_exists(#handle)',
            ExpressionAttributeNames: { '#handle': 'handle' },
          }),
        ),
      );
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
    }
  }

  private nowSeconds(): number {
    return Math.floor(this.now() / 1000);
  }

  /** Runs one SDK call, turning SDK errors other than a failed condition into store errors. */
  private async call<T>(operation: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      if (isConditionalCheckFailed(error)) throw error;
      throw toStoreError(error, operation, this.tableName);
    }
  }

  private pageSize(issues: FieldIssue[], limit: number | undefined): number {
    if (limit === undefined) return DEFAULT_PAGE_SIZE;
    if (!(Number.isInteger(limit) && limit >= 1 && limit <= MAX_PAGE_SIZE)) {
      issues.push({ path: 'limit', message: `must be an integer from 1 to ${MAX_PAGE_SIZE}` });
    }
    return limit;
  }

  private validateIdempotencyKey(issues: FieldIssue[], key: unknown): void {
    if (typeof key !== 'string' || key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
      issues.push({
        path: 'idempotencyKey',
        message: `must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`,
      });
    }
  }

  private validateNewRecord(record: AppRecord): void {
    const issues: FieldIssue[] = [];
    requireText(issues, 'handle', record.handle, MAX_HANDLE_BYTES);
    requireText(issues, 'scheduler', record.scheduler, 255);
    requireText(issues, 'owner', record.owner, 1024);
    requireText(issues, 'nativeName', record.nativeName, 1024);
    requireTime(issues, 'createdAt', record.createdAt, true);
    if (!isAppState(record.state)) issues.push({ path: 'state', message: 'must be an AppState' });
    if (typeof record.handle === 'string' && record.handle !== '') {
      try {
        if (parseAppHandle(record.handle).scheduler !== record.scheduler) {
          issues.push({
            path: 'handle',
            message: `must start with the record's scheduler '${record.scheduler}://'`,
          });
        }
      } catch (error) {
        issues.push({ path: 'handle', message: error instanceof Error ? error.message : String(error) });
      }
    }
    throwIfIssues('app record', issues);
    const size = itemSize(this.appItem(record, 1));
    if (size > MAX_NEW_RECORD_BYTES) {
      const field = attributeValueSize(record.app) >= attributeValueSize(record.cfg) ? 'app' : 'cfg';
      const message =
        `the app record would be ${Math.ceil(size / 1024)} KB; at most ${MAX_NEW_RECORD_BYTES / 1024} KB can be ` +
        `stored (DynamoDB items are limited to 400 KB, the rest is kept for status history). Shrink ${field}: ` +
        'move large env values, args or metadata into a file the job reads (S3 or the image)';
      throw new ValidationError(`${field}: ${message}`, [{ path: field, message }]);
    }
  }

  /** The item of an app record at `version`. */
  private appItem(record: AppRecord, version: number): Item {
    const item: Item = {
      [A.partitionKey]: appPartitionKey(record.handle),
      [A.sortKey]: APP_SORT_KEY,
      entity: APP_ENTITY,
      [A.ownerKey]: record.owner,
      [A.allKey]: ALL_APPS_KEY,
      [A.createdKey]: createdSortKey(record.createdAt, record.handle),
      [A.nativeKey]: nativeKeyOf(record.scheduler, record.nativeName),
      stateRank: stateRank(record.state),
      version,
      ...record,
    };
    if (isTerminal(record.state)) item[A.expiresAt] = this.expiryOf(record.updatedAt);
    else item[A.activeKey] = record.scheduler;
    return item;
  }

  private expiryOf(finishedAt: number): number {
    return Math.floor(finishedAt / 1000) + this.retentionSeconds;
  }

  /** The app item for a handle (consistent read), or undefined when absent or past its TTL. */
  /**
   * Puts `item` unless an unexpired item with its key exists (create-once for records and idempotency
   * reservations; an item past its TTL that DynamoDB has not deleted yet counts as absent).
   *
   * @returns false when the condition failed (the item exists).
   */
  private async putIfAbsent(item: Item, nowSeconds: number): Promise<boolean> {
    try {
      await this.call('PutItem', () =>
        this.client.send(
          new PutCommand({
            TableName: this.tableName,
            Item: item,
            ConditionExpression: 'attribute_not_exists(#pk) OR #expiresAt <= :nowSeconds',
            ExpressionAttributeNames: { '#pk': A.partitionKey, '#expiresAt': A.expiresAt },
            ExpressionAttributeValues: { ':nowSeconds': nowSeconds },
          }),
        ),
      );
      return true;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return false;
      throw error;
    }
  }

  private async getAppItem(handle: AppHandle): Promise<Item | undefined> {
    const output = await this.call('GetItem', () =>
      this.client.send(
        new GetCommand({
          TableName: this.tableName,
          Key: { [A.partitionKey]: appPartitionKey(handle), [A.sortKey]: APP_SORT_KEY },
          ConsistentRead: true,
        }),
      ),
    );
    const item = output.Item;
    if (!item) return undefined;
    const expiresAt = item[A.expiresAt];
    if (typeof expiresAt === 'number' && expiresAt <= this.nowSeconds()) return undefined;
    return item;
  }

  private async getIdempotencyItem(owner: string, key: string): Promise<Item | undefined> {
    const output = await this.call('GetItem', () =>
      this.client.send(
        new GetCommand({
          TableName: this.tableName,
          Key: { [A.partitionKey]: idempotencyPartitionKey(owner, key), [A.sortKey]: IDEMPOTENCY_SORT_KEY },
          ConsistentRead: true,
        }),
      ),
    );
    return output.Item;
  }

  /**
   * Writes an accepted transition: one UpdateItem conditioned on the version that was read and on the
   * forward rule. Entering a terminal state removes `activeKey` and sets `expiresAt`.
   *
   * @returns false when the item changed since it was read (the caller reads and decides again).
   */
  private async writeTransition(
    item: Item,
    current: AppRecord,
    next: AppRecord,
    transition: AppStateTransition,
  ): Promise<boolean> {
    const version = typeof item.version === 'number' ? item.version : 0;
    const forward = forwardTransitionCondition(transition);
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
    if (next.state !== current.state) set('history', next.history);
    if (transition.reason !== undefined) set('reason', next.reason);
    if (transition.numRestarts !== undefined) set('numRestarts', next.numRestarts);
    if (transition.roles !== undefined) set('roles', next.roles);
    if (transition.uiUrl !== undefined) set('uiUrl', next.uiUrl);
    const removes: string[] = [];
    if (isTerminal(next.state)) {
      set(A.expiresAt, this.expiryOf(next.updatedAt));
      names['#activeKey'] = A.activeKey;
      removes.push('#activeKey');
    }
    const update = `SET ${sets.join(', ')}${removes.length > 0 ? ` REMOVE ${removes.join(', ')}` : ''}`;
    const size = itemSize(this.appItem(next, version + 1));
    if (size > MAX_ITEM_BYTES) {
      throw new RecordTooLargeError(
        `The record of ${next.handle} would grow to ${Math.ceil(size / 1024)} KB with this transition, over ` +
          "DynamoDB's 400 KB item limit; nothing was written (replica statuses or reasons are too large)",
      );
    }
    try {
      await this.call('UpdateItem', () =>
        this.client.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: { [A.partitionKey]: item[A.partitionKey], [A.sortKey]: item[A.sortKey] },
            UpdateExpression: update,
            ConditionExpression: `#version = :version AND ${forward.expression}`,
            ExpressionAttributeNames: names,
            ExpressionAttributeValues: values,
          }),
        ),
      );
      return true;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return false;
      throw error;
    }
  }

  /**
   * Reads Query pages until `limit` items are collected, the index is exhausted, or the page budget is
   * spent. Asks for one item more than needed so a full last page does not leave an empty page behind.
   */
  private async collectPages(params: {
    base: QueryCommandInput;
    limit: number;
    /** Items per Query when filters are set (0: exactly what is still needed). */
    batch: number;
    startKey: Item | undefined;
    tokenOf: (key: Item) => string | undefined;
  }): Promise<ListAppsPage> {
    const records: AppRecord[] = [];
    let startKey = params.startKey;
    for (let page = 0; page < MAX_QUERY_PAGES_PER_CALL; page++) {
      const remaining = params.limit - records.length;
      const output = await this.call('Query', () =>
        this.client.send(
          new QueryCommand({
            ...params.base,
            Limit: Math.max(remaining + 1, params.batch),
            ...(startKey ? { ExclusiveStartKey: startKey } : {}),
          }),
        ),
      );
      for (const item of output.Items ?? []) {
        if (records.length === params.limit) {
          const last = records[records.length - 1];
          const token = last && params.tokenOf(this.indexKeyOf(last));
          return token === undefined ? { records } : { records, nextToken: token };
        }
        records.push(recordOf(item));
      }
      if (!output.LastEvaluatedKey) return { records };
      startKey = output.LastEvaluatedKey;
    }
    const token = startKey && params.tokenOf(startKey);
    return token === undefined ? { records } : { records, nextToken: token };
  }

  /** The index key attributes of a record, as a page cursor needs them. */
  private indexKeyOf(record: AppRecord): Item {
    return {
      [A.partitionKey]: appPartitionKey(record.handle),
      [A.createdKey]: createdSortKey(record.createdAt, record.handle),
      [A.updatedAt]: record.updatedAt,
    };
  }
}
