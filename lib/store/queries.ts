/**
 * Reads across records: an owner's list and counts per state, a scheduler's active records, a record by its
 * scheduler's native name. Lists are Queries on global secondary indexes; nothing here scans the table.
 *
 * @module
 */

import {
  ALL_OWNERS,
  APP_COUNT_CAP,
  type AppCounts,
  type CountAppsQuery,
  type ListAppsPage,
  type ListAppsQuery,
} from '../runner/store.js';
import { type AppRecord, type AppState, type FieldIssue, isAppState } from '../specs/index.js';
import { indexKeyOf, recordOf } from './app-items.js';
import { call, type Item, nowSeconds, type StoreContext } from './context.js';
import type { QueryInput } from './item-client.js';
import {
  APP_SORT_KEY,
  appPartitionKey,
  createdAtPrefix,
  decodePageCursor,
  encodePageCursor,
  handleOfCreatedKey,
  nativeKeyOf,
} from './keys.js';
import type { AppRecordItems } from './records.js';
import { TABLE_ATTRIBUTES as A, ALL_APPS_KEY, TABLE_INDEXES } from './table.js';
import { pageSize, requireText, requireTime, throwIfIssues } from './validation.js';

/** Query pages read by one `list` call at most before it returns what it has with a `nextToken`. */
const MAX_QUERY_PAGES_PER_CALL = 10;
/** Items read per Query page when filters are set (DynamoDB applies `Limit` before the filter). */
const FILTERED_QUERY_BATCH = 200;

/** The query half of the store: list, countByState, listActive, findByNativeName. */
export class AppQueries {
  constructor(
    private readonly context: StoreContext,
    private readonly records: AppRecordItems,
  ) {}

  /**
   * The newest record the scheduler knows by `nativeName`: a keys-only Query on `byNativeName`, then a
   * consistent read of the record.
   */
  async findByNativeName(scheduler: string, nativeName: string): Promise<AppRecord | undefined> {
    if (scheduler === '' || nativeName === '') return undefined;
    const { client, tableName } = this.context;
    const output = await call(this.context, 'Query', () =>
      client.query({
        TableName: tableName,
        IndexName: TABLE_INDEXES.byNativeName,
        KeyConditionExpression: '#nativeKey = :nativeKey',
        ExpressionAttributeNames: { '#nativeKey': A.nativeKey },
        ExpressionAttributeValues: { ':nativeKey': nativeKeyOf(scheduler, nativeName) },
        ScanIndexForward: false,
        Limit: 1,
      }),
    );
    const createdKey = output.Items?.[0]?.[A.createdKey];
    if (typeof createdKey !== 'string') return undefined;
    return this.records.get(handleOfCreatedKey(createdKey));
  }

  /**
   * Lists an owner's records (every owner's with {@link ALL_OWNERS}: the `byCreated` index), newest first: a
   * Query on `byOwner` (see {@link ownerIndexQuery} for the filters). It keeps reading until `limit` records match or the index is
   * exhausted, reading at most 10 Query pages per call; a shorter page with a `nextToken` means "more may
   * follow".
   *
   * @throws ValidationError naming `owner`, `limit`, `states`, `since` or `nextToken`.
   */
  async list(query: ListAppsQuery): Promise<ListAppsPage> {
    const issues: FieldIssue[] = [];
    const limit = pageSize(issues, query.limit);
    const owned = this.ownerIndexQuery(query, issues);
    throwIfIssues('list query', issues);
    const cursor = query.nextToken === undefined ? undefined : decodePageCursor(query.nextToken, 'byOwner');
    if (cursor && owned.sinceKey !== undefined && cursor.createdKey < owned.sinceKey) return { records: [] };
    return this.collectPages({
      base: owned.input,
      limit,
      batch: owned.filtered ? FILTERED_QUERY_BATCH : 0,
      startKey: cursor && {
        [owned.partitionAttribute]: owned.partitionValue,
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
   * Counts an owner's records (every owner's with {@link ALL_OWNERS}) per state, with a listing's filters:
   * the same Query as {@link list}, projecting only the state, paged until the index is exhausted or `cap`
   * records were read (then one more Query of one record tells whether any is left unread: `complete` is
   * false and the counts are a lower bound).
   *
   * @throws ValidationError naming `owner`, `since`, `scheduler`, `session` or `cap`.
   */
  async countByState(query: CountAppsQuery, cap: number = APP_COUNT_CAP): Promise<AppCounts> {
    const issues: FieldIssue[] = [];
    if (!(Number.isInteger(cap) && cap > 0))
      issues.push({ path: 'cap', message: 'must be a positive integer' });
    const owned = this.ownerIndexQuery(query, issues);
    throwIfIssues('count query', issues);
    const counts: Partial<Record<AppState, number>> = {};
    let counted = 0;
    let read = 0;
    let startKey: Item | undefined;
    const page = (limit: number) =>
      call(this.context, 'Query', () =>
        this.context.client.query({
          ...owned.input,
          ExpressionAttributeNames: { ...owned.input.ExpressionAttributeNames, '#state': 'state' },
          ProjectionExpression: '#state',
          Limit: limit,
          ...(startKey ? { ExclusiveStartKey: startKey } : {}),
        }),
      );
    do {
      const output = await page(cap - read);
      read += output.ScannedCount ?? 0;
      for (const item of output.Items ?? []) {
        const state = item.state;
        if (typeof state !== 'string' || !isAppState(state)) continue;
        counts[state] = (counts[state] ?? 0) + 1;
        counted += 1;
      }
      startKey = output.LastEvaluatedKey;
    } while (startKey !== undefined && read < cap);
    // A page that ends at its Limit carries a LastEvaluatedKey even when nothing follows: look one record on.
    const complete = startKey === undefined || ((await page(1)).ScannedCount ?? 0) === 0;
    return { counts, counted, complete };
  }

  /**
   * A listing's filters as a Query on `byOwner` (`byCreated` for {@link ALL_OWNERS}), newest first: `since`
   * is a key condition; scheduler, session and states (empty means any) are filters, as is the expiry of
   * records DynamoDB's TTL has not removed yet. Pushes the issues of the filters onto `issues`.
   */
  private ownerIndexQuery(
    query: ListAppsQuery | CountAppsQuery,
    issues: FieldIssue[],
  ): {
    input: QueryInput;
    partitionAttribute: string;
    partitionValue: string;
    sinceKey: string | undefined;
    filtered: boolean;
  } {
    if (query.owner !== ALL_OWNERS) requireText(issues, 'owner', query.owner, 1024);
    if (query.since !== undefined) requireTime(issues, 'since', query.since, false);
    const listed = 'states' in query ? query.states : undefined;
    listed?.forEach((state, i) => {
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
    const all = query.owner === ALL_OWNERS;
    const sinceKey = query.since === undefined ? undefined : createdAtPrefix(query.since);
    const partitionAttribute = all ? A.allKey : A.ownerKey;
    const partitionValue = query.owner === ALL_OWNERS ? ALL_APPS_KEY : query.owner;
    const names: Record<string, string> = { '#ownerKey': partitionAttribute, '#expiresAt': A.expiresAt };
    const values: Record<string, unknown> = {
      ':owner': partitionValue,
      ':nowSeconds': nowSeconds(this.context),
    };
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
    const states = [...new Set(listed ?? [])];
    if (states.length > 0) {
      names['#state'] = 'state';
      states.forEach((state, i) => {
        values[`:state${i}`] = state;
      });
      filters.push(`#state IN (${states.map((_, i) => `:state${i}`).join(', ')})`);
    }
    return {
      input: {
        TableName: this.context.tableName,
        IndexName: all ? TABLE_INDEXES.byCreated : TABLE_INDEXES.byOwner,
        KeyConditionExpression: keyCondition,
        FilterExpression: filters.join(' AND '),
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
        ScanIndexForward: false,
      },
      partitionAttribute,
      partitionValue,
      sinceKey,
      filtered: query.scheduler !== undefined || query.session !== undefined || states.length > 0,
    };
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
    const size = pageSize(issues, limit);
    throwIfIssues('active app query', issues);
    const cursor = nextToken === undefined ? undefined : decodePageCursor(nextToken, 'byActive');
    return this.collectPages({
      base: {
        TableName: this.context.tableName,
        IndexName: TABLE_INDEXES.byActive,
        KeyConditionExpression: '#activeKey = :scheduler',
        ExpressionAttributeNames: { '#activeKey': A.activeKey },
        ExpressionAttributeValues: { ':scheduler': scheduler },
        ScanIndexForward: true,
      },
      limit: size,
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
   * Reads Query pages until `limit` items are collected, the index is exhausted, or the page budget is
   * spent. Asks for one item more than needed so a full last page does not leave an empty page behind.
   */
  private async collectPages(params: {
    base: QueryInput;
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
      const output = await call(this.context, 'Query', () =>
        this.context.client.query({
          ...params.base,
          Limit: Math.max(remaining + 1, params.batch),
          ...(startKey ? { ExclusiveStartKey: startKey } : {}),
        }),
      );
      for (const item of output.Items ?? []) {
        if (records.length === params.limit) {
          const last = records[records.length - 1];
          const token = last && params.tokenOf(indexKeyOf(last));
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
}
