/**
 * The DynamoDB implementation of the runner's {@link AppRecordStore}, composed of three parts over one
 * {@link StoreContext}: {@link AppRecordItems} (create, get, transition, markCancelRequested),
 * {@link AppQueries} (list, countByState, listActive, findByNativeName) and {@link IdempotencyKeys} (reservations).
 * Every write is conditional; lists are Queries on global secondary indexes and nothing scans the table.
 *
 * @module
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { AppRecordStore } from '../runner/store.js';
import type { FieldIssue } from '../specs/index.js';
import { defaultDynamoDbClient, type StoreContext } from './context.js';
import { IdempotencyKeys } from './idempotency.js';
import { ItemClient } from './item-client.js';
import { AppQueries } from './queries.js';
import { AppRecordItems } from './records.js';
import { requireText, throwIfIssues } from './validation.js';

export { type ConditionParts, forwardTransitionCondition } from './records.js';
export {
  DEFAULT_PAGE_SIZE,
  MAX_HANDLE_BYTES,
  MAX_IDEMPOTENCY_KEY_LENGTH,
  MAX_NEW_RECORD_BYTES,
  MAX_PAGE_SIZE,
} from './validation.js';

/** Days a finished (terminal) record is kept before DynamoDB's TTL deletes it. */
export const DEFAULT_RETENTION_DAYS = 90;
/** Seconds an idempotency reservation is kept. */
export const DEFAULT_IDEMPOTENCY_TTL_SECONDS = 24 * 60 * 60;

/** Options of {@link DynamoAppRecordStore}. */
export interface DynamoAppRecordStoreOptions {
  /** The app record table (created from `createTableInput`). */
  tableName: string;
  /**
   * The AWS SDK's DynamoDB client to use. Defaults to one shared client built on first use from the
   * environment (region, credentials, `AWS_ENDPOINT_URL_DYNAMODB`; see `newDynamoDbClient`).
   */
  client?: DynamoDBClient;
  /** Days a terminal record is kept before TTL deletes it (default {@link DEFAULT_RETENTION_DAYS}). */
  retentionDays?: number;
  /** Seconds an idempotency reservation is kept (default {@link DEFAULT_IDEMPOTENCY_TTL_SECONDS}). */
  idempotencyTtlSeconds?: number;
  /** Clock (epoch ms) for `updatedAt`, TTLs and hiding expired items. Defaults to `Date.now`. */
  now?: () => number;
  /**
   * Attempts of a transition that keeps losing races with concurrent transitions of the same app before
   * it fails with `StoreConflictError` (default 20).
   */
  maxTransitionAttempts?: number;
}

/**
 * App records in one DynamoDB table (see `lib/store/table.ts` for the layout): the runner's three ports,
 * each served by its own part over the one table, with no verb forwarded.
 *
 * @example
 * ```ts
 * const store = new DynamoAppRecordStore({ tableName: 'txs-apps', client: new DynamoDBClient({}) });
 * const { created } = await store.records.create(newRecord);
 * await store.records.transition(newRecord.handle, { state: 'RUNNING', attempt: 0, eventTime: Date.now(), source: 'event' });
 * ```
 */
export class DynamoAppRecordStore implements AppRecordStore {
  readonly tableName: string;
  /** create, get, transition, markCancelRequested (and the TTL of a record read). */
  readonly records: AppRecordItems;
  /** findByNativeName, list, countByState, listActive. */
  readonly queries: AppQueries;
  /** Idempotency-Key reservations. */
  readonly idempotency: IdempotencyKeys;

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
    const context: StoreContext = {
      tableName: options.tableName,
      client: new ItemClient(options.client ?? defaultDynamoDbClient()),
      retentionSeconds: Math.round(retentionDays * 24 * 60 * 60),
      idempotencyTtlSeconds,
      now: options.now ?? Date.now,
      maxTransitionAttempts,
    };
    this.records = new AppRecordItems(context);
    this.queries = new AppQueries(context, this.records);
    this.idempotency = new IdempotencyKeys(context);
  }
}
