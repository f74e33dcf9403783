/**
 * How an {@link AppRecord} is laid out as a DynamoDB item: the record's fields plus the index keys
 * (`ownerKey`, `createdKey`, `nativeKey`, the sparse `activeKey`), `stateRank`, `version` and, once
 * terminal, the TTL attribute.
 *
 * @module
 */
import { type AppRecord, isTerminal, stateRank } from '../specs/index.js';
import type { Item } from './context.js';
import { APP_SORT_KEY, appPartitionKey, createdSortKey, nativeKeyOf } from './keys.js';
import { TABLE_ATTRIBUTES as A, ALL_APPS_KEY } from './table.js';

/** `entity` attribute value of app items, so items are self-describing in the single table. */
export const APP_ENTITY = 'App';

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
  workspace: true,
  state: true,
  reason: true,
  stateReason: true,
  attemptOutcomes: true,
  numRestarts: true,
  roles: true,
  uiUrl: true,
  attempt: true,
  lastEventTime: true,
  createdAt: true,
  updatedAt: true,
  history: true,
  historyElided: true,
  idempotencyKey: true,
  cancelRequestedAt: true,
} satisfies Record<keyof AppRecord, true>) as (keyof AppRecord)[];

/** A deep copy with `undefined` dropped, as DynamoDB stores it (values here are JSON data). */
export function storable<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** The record held by an app item. */
export function recordOf(item: Item): AppRecord {
  const record: Partial<Record<keyof AppRecord, unknown>> = {};
  for (const field of RECORD_FIELDS) {
    if (item[field] !== undefined) record[field] = item[field];
  }
  return record as AppRecord;
}

/** The TTL (epoch seconds) of a record that finished at `finishedAt` (epoch ms). */
export function expiryOf(finishedAt: number, retentionSeconds: number): number {
  return Math.floor(finishedAt / 1000) + retentionSeconds;
}

/** The item of an app record at `version`. */
export function appItem(record: AppRecord, version: number, retentionSeconds: number): Item {
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
  if (isTerminal(record.state)) item[A.expiresAt] = expiryOf(record.updatedAt, retentionSeconds);
  else item[A.activeKey] = record.scheduler;
  return item;
}

/** The index key attributes of a record, as a page cursor needs them. */
export function indexKeyOf(record: AppRecord): Item {
  return {
    [A.partitionKey]: appPartitionKey(record.handle),
    [A.createdKey]: createdSortKey(record.createdAt, record.handle),
    [A.updatedAt]: record.updatedAt,
  };
}
