/**
 * The local server's read-through cache of app records, in front of the record store (dynalite stays the
 * source of truth; every miss is the store's own consistent read). A status request that hits it costs no
 * DynamoDB round trip.
 *
 * Why it cannot go stale: the local server is the only process that reaches its dynalite (the data directory
 * is locked, and dynalite listens on no socket: lib/local/embedded-dynamodb.ts), and every request that may
 * change the table passes the embedded handler, which reports it here before dynalite sees it and again once
 * dynalite has answered, committed or refused (a failed conditional write). Whatever code wrote (a Runner,
 * the local scheduler's state changes, crash recovery, a cancel or delete), then:
 *
 * - a write drops the entry of the record it touches when it starts and again when it ends; a write whose
 *   item it cannot name (a batch, a table change) drops every entry;
 * - a miss keeps what it read only if no write was under way when it ended and none started or ended while it
 *   read (a counter that every write's start and end advances), so a read that overlapped a write never
 *   stores the value from before it.
 *
 * Entries are frozen (every caller shares them), honour the record's TTL exactly as the store does, and are
 * bounded in size (least recently used dropped first).
 *
 * @module
 */
import { type AppRecordStore, type RecordStore, withRecords } from '../runner/index.js';
import type { AppHandle, AppRecord } from '../specs/index.js';
import { appPartitionKey, TABLE_ATTRIBUTES } from '../store/index.js';
import type { DynamoDbWrite, WriteObserver } from './embedded-dynamodb.js';

/** Options of {@link RecordCache}. */
export interface RecordCacheOptions {
  /** Most bytes of records (as JSON) kept; default 8 MiB (thousands of records; a few times that in heap). */
  maxBytes?: number;
  /** Clock (epoch ms) for the records' TTL; default `Date.now`, the store's clock. */
  now?: () => number;
}

/** What the cache has done, for tests and the benchmark. */
export interface RecordCacheStats {
  hits: number;
  misses: number;
  /** Reads whose result was not kept because a write overlapped them. */
  notKept: number;
  entries: number;
  bytes: number;
}

interface Entry {
  record: AppRecord;
  /** The record's TTL (epoch seconds), when it has one. */
  expiresAt: number | undefined;
  bytes: number;
}

/** Freezes `value` and everything it holds (records are JSON data: no cycles). */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

/** The partition key a write names, or undefined when it may touch any item. */
function partitionKeyOf(write: DynamoDbWrite): string | undefined {
  const pk = write.key?.[TABLE_ATTRIBUTES.partitionKey]?.S;
  return typeof pk === 'string' ? pk : undefined;
}

/**
 * App records by partition key, kept coherent by the writes the embedded DynamoDB reports.
 *
 * @example
 * ```ts
 * const cache = new RecordCache();
 * const db = startEmbeddedDynamoDb({ inMemory: true, observeWrites: cache.observeWrite });
 * const cached = cache.wrap(store, (record) => store.expiresAtOf(record));
 * ```
 */
export class RecordCache {
  private readonly entries = new Map<string, Entry>();
  private readonly maxBytes: number;
  private readonly now: () => number;
  private bytes = 0;
  private writesUnderWay = 0;
  /** Advanced by every write's start and end. */
  private epoch = 0;
  private readonly counts = { hits: 0, misses: 0, notKept: 0 };

  constructor(options: RecordCacheOptions = {}) {
    this.maxBytes = options.maxBytes ?? 8 * 1024 * 1024;
    this.now = options.now ?? Date.now;
  }

  /** Give this to the embedded DynamoDB: it is told of every write before and after dynalite handles it. */
  readonly observeWrite: WriteObserver = (write) => {
    const pk = partitionKeyOf(write);
    this.writesUnderWay++;
    this.changed(pk);
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.writesUnderWay--;
      this.changed(pk);
    };
  };

  /**
   * `store` with `get` answered from the cache when it can; every other verb is `store`'s own. `expiresAtOf`
   * gives the TTL of a record `store.get` returned (the DynamoDB store's `expiresAtOf`).
   */
  wrap(store: AppRecordStore, expiresAtOf: (record: AppRecord) => number | undefined): AppRecordStore {
    return withRecords(store, { get: (handle) => this.get(handle, store.records, expiresAtOf) });
  }

  /** Counters and size. */
  stats(): RecordCacheStats {
    return { ...this.counts, entries: this.entries.size, bytes: this.bytes };
  }

  private async get(
    handle: AppHandle,
    records: Pick<RecordStore, 'get'>,
    expiresAtOf: (record: AppRecord) => number | undefined,
  ): Promise<AppRecord | undefined> {
    const pk = appPartitionKey(handle);
    const entry = this.entries.get(pk);
    if (entry !== undefined) {
      if (entry.expiresAt === undefined || entry.expiresAt > Math.floor(this.now() / 1000)) {
        this.counts.hits++;
        // Most recently used last: the oldest entry is dropped first.
        this.entries.delete(pk);
        this.entries.set(pk, entry);
        return entry.record;
      }
      this.drop(pk);
    }
    this.counts.misses++;
    const epoch = this.epoch;
    const record = await records.get(handle);
    if (record === undefined) return undefined;
    if (this.writesUnderWay > 0 || this.epoch !== epoch) {
      this.counts.notKept++;
      return record;
    }
    this.keep(pk, deepFreeze(record), expiresAtOf(record));
    return record;
  }

  private keep(pk: string, record: AppRecord, expiresAt: number | undefined): void {
    const bytes = JSON.stringify(record).length;
    if (bytes > this.maxBytes) return;
    this.drop(pk);
    while (this.bytes + bytes > this.maxBytes) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      this.drop(oldest.value);
    }
    this.entries.set(pk, { record, expiresAt, bytes });
    this.bytes += bytes;
  }

  /** A write to `pk` (undefined: to any item) started or ended. */
  private changed(pk: string | undefined): void {
    this.epoch++;
    if (pk !== undefined) {
      this.drop(pk);
      return;
    }
    this.entries.clear();
    this.bytes = 0;
  }

  private drop(pk: string): void {
    const entry = this.entries.get(pk);
    if (entry === undefined) return;
    this.entries.delete(pk);
    this.bytes -= entry.bytes;
  }
}
