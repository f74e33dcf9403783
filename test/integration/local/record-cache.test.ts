/**
 * The local server's record cache in front of the real store, against the embedded dynalite it is built for
 * (in memory, reached in process): what it serves after writes, failed conditional writes, writes overlapping a
 * read, writes from outside the store, and records past their TTL.
 */
import { DynamoDBClient, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import type { HttpRequest } from '@smithy/protocol-http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EmbeddedDynamoDb, startEmbeddedDynamoDb } from '../../../lib/local/embedded-dynamodb.js';
import { RecordCache } from '../../../lib/local/record-cache.js';
import type { AppRecordStore } from '../../../lib/runner/index.js';
import type { AppRecord } from '../../../lib/specs/index.js';
import { appPartitionKey, type DynamoAppRecordStore } from '../../../lib/store/index.js';
import { createAppTable } from '../../helpers/dynalite.js';
import { event, makeStore, newRecord, T0 } from '../store/fixtures.js';

const TABLE = 'txs-apps';
let db: EmbeddedDynamoDb;
let client: DynamoDBClient;
let cache: RecordCache;
let store: DynamoAppRecordStore;
let cached: AppRecordStore;
let clock: { now: number };
/** While set, GetItem answers wait for it after dynalite produced them. */
let holdReads: Promise<void> | undefined;
let heldReads = 0;

beforeAll(async () => {
  clock = { now: T0 + 60_000 };
  cache = new RecordCache({ now: () => clock.now });
  db = startEmbeddedDynamoDb({ inMemory: true, observeWrites: cache.observeWrite });
  const inner = db.requestHandler;
  const requestHandler = {
    async handle(request: HttpRequest) {
      const answer = await inner.handle(request);
      const hold = holdReads;
      if (hold && request.headers['x-amz-target']?.endsWith('.GetItem')) {
        heldReads++;
        await hold;
      }
      return answer;
    },
    updateHttpClientConfig() {},
    httpHandlerConfigs() {
      return {};
    },
  };
  client = new DynamoDBClient({
    endpoint: db.endpoint,
    requestHandler,
    region: 'local',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  await createTable(TABLE);
  ({ store, clock } = makeStore(client, TABLE, { retentionDays: 7 }));
  cached = cache.wrap(store, (record) => store.records.expiresAtOf(record));
});
afterAll(async () => {
  await db.close();
});

async function createTable(name: string): Promise<void> {
  await createAppTable(client, name);
}

async function created(): Promise<AppRecord> {
  return (await store.records.create(newRecord())).record;
}

/** The change in the cache's counters while `run` runs. */
async function counted(
  run: () => Promise<unknown>,
): Promise<{ hits: number; misses: number; notKept: number }> {
  const before = cache.stats();
  await run();
  const after = cache.stats();
  return {
    hits: after.hits - before.hits,
    misses: after.misses - before.misses,
    notKept: after.notKept - before.notKept,
  };
}

describe('RecordCache', () => {
  it('answers a record read once from memory, until a write to it', async () => {
    const { handle } = await created();
    expect(await counted(() => cached.records.get(handle))).toEqual({ hits: 0, misses: 1, notKept: 0 });
    expect(await counted(() => cached.records.get(handle))).toEqual({ hits: 1, misses: 0, notKept: 0 });
    await store.records.transition(handle, event('RUNNING', 0, T0 + 1000));
    let after: AppRecord | undefined;
    expect(await counted(async () => (after = await cached.records.get(handle)))).toMatchObject({
      hits: 0,
      misses: 1,
    });
    expect(after?.state).toBe('RUNNING');
    expect((await cached.records.get(handle))?.state).toBe('RUNNING');
  });

  it('answers the same record for any session of the handle, as the store does', async () => {
    const record = await created();
    const otherSession = record.handle.replace('://torchx/', '://elsewhere/');
    await cached.records.get(record.handle);
    expect(await counted(() => cached.records.get(otherSession))).toEqual({ hits: 1, misses: 0, notKept: 0 });
    expect(await cached.records.get(otherSession)).toEqual(await store.records.get(otherSession));
  });

  it('drops the record when a conditional write to it fails, and reads it again', async () => {
    const record = await created();
    await cached.records.get(record.handle);
    // Creating it again is a conditional PutItem that fails: nothing changes, the cache still lets go of it.
    expect((await store.records.create(newRecord({ ...record, history: undefined } as never))).created).toBe(
      false,
    );
    expect(await counted(() => cached.records.get(record.handle))).toMatchObject({ hits: 0, misses: 1 });
    expect((await cached.records.get(record.handle))?.state).toBe('SUBMITTED');
  });

  it('sees a write that did not come through the store (every write passes the embedded handler)', async () => {
    const { handle } = await created();
    expect((await cached.records.get(handle))?.name).toBe('trainer');
    await client.send(
      new UpdateItemCommand({
        TableName: TABLE,
        Key: { pk: { S: appPartitionKey(handle) }, sk: { S: 'A' } },
        UpdateExpression: 'SET #name = :name',
        ExpressionAttributeNames: { '#name': 'name' },
        ExpressionAttributeValues: { ':name': { S: 'renamed' } },
      }),
    );
    expect((await cached.records.get(handle))?.name).toBe('renamed');
  });

  it('never keeps a value read before a write that ended while the read was on its way back', async () => {
    const { handle } = await created();
    let release = () => {};
    holdReads = new Promise<void>((resolve) => {
      release = resolve;
    });
    heldReads = 0;
    const reading = cached.records.get(handle);
    while (heldReads === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    holdReads = undefined;
    await store.records.transition(handle, event('RUNNING', 0, T0 + 1000));
    release();
    // The read was answered before the write: it may return the old state, but must not keep it.
    expect((await reading)?.state).toBe('SUBMITTED');
    expect(cache.stats().entries).toBeGreaterThan(0);
    expect(await counted(() => cached.records.get(handle))).toMatchObject({ hits: 0, misses: 1 });
    expect((await cached.records.get(handle))?.state).toBe('RUNNING');
  });

  it('keeps nothing read while a write is under way, and drops the record when the write ends', async () => {
    const { handle } = await created();
    const ended = cache.observeWrite({
      operation: 'UpdateItem',
      key: { pk: { S: appPartitionKey(handle) }, sk: { S: 'A' } },
    });
    expect(await counted(() => cached.records.get(handle))).toEqual({ hits: 0, misses: 1, notKept: 1 });
    ended();
    expect(await counted(() => cached.records.get(handle))).toEqual({ hits: 0, misses: 1, notKept: 0 });
    expect(await counted(() => cached.records.get(handle))).toEqual({ hits: 1, misses: 0, notKept: 0 });
  });

  it('drops every record on a write that names no single item', async () => {
    const { handle } = await created();
    await cached.records.get(handle);
    expect(cache.stats().entries).toBeGreaterThan(0);
    await createTable(`${TABLE}-other`);
    expect(cache.stats()).toMatchObject({ entries: 0, bytes: 0 });
    expect(await counted(() => cached.records.get(handle))).toMatchObject({ misses: 1 });
  });

  it('answers a finished record past its TTL as gone, exactly when the store does', async () => {
    const { handle } = await created();
    await store.records.transition(handle, event('SUCCEEDED', 0, T0 + 1000));
    expect((await cached.records.get(handle))?.state).toBe('SUCCEEDED');
    const expiresAt =
      (await store.records.get(handle)) &&
      store.records.expiresAtOf((await store.records.get(handle)) as AppRecord);
    expect(expiresAt).toEqual(expect.any(Number));
    clock.now = ((expiresAt as number) - 1) * 1000;
    expect(await counted(() => cached.records.get(handle))).toEqual({ hits: 1, misses: 0, notKept: 0 });
    clock.now = (expiresAt as number) * 1000;
    expect(await cached.records.get(handle)).toBeUndefined();
    expect(await store.records.get(handle)).toBeUndefined();
    clock.now = T0 + 60_000;
  });

  it('hands out frozen records, so no caller can change what the next one gets', async () => {
    const { handle } = await created();
    await cached.records.get(handle);
    const record = (await cached.records.get(handle)) as AppRecord;
    expect(() => {
      (record as { state: string }).state = 'FAILED';
    }).toThrow(TypeError);
    expect(() => record.history.push({ from: 'SUBMITTED', to: 'FAILED', time: 0, source: 'event' })).toThrow(
      TypeError,
    );
    expect(() => {
      (record.cfg as Record<string, unknown>).queue = 'other';
    }).toThrow(TypeError);
  });

  it('lets a transition start from a cached record, as from one the store just read', async () => {
    const { handle } = await created();
    await cached.records.get(handle);
    const current = (await cached.records.get(handle)) as AppRecord;
    const outcome = await store.records.transition(handle, event('RUNNING', 0, T0 + 1000), current);
    expect(outcome).toMatchObject({ applied: true, previous: 'SUBMITTED', version: 2 });
    expect((await cached.records.get(handle))?.state).toBe('RUNNING');
  });

  it('drops the least recently used records beyond its size bound', async () => {
    const handles = [];
    for (let i = 0; i < 4; i++) handles.push((await created()).handle);
    // Room for two and a half records.
    const recordBytes = JSON.stringify(await store.records.get(handles[0] as string)).length;
    const small = new RecordCache({ maxBytes: Math.floor(recordBytes * 2.5) });
    const wrapped = small.wrap(store, (record) => store.records.expiresAtOf(record));
    for (const handle of handles) await wrapped.records.get(handle);
    expect(small.stats()).toMatchObject({ entries: 2, bytes: recordBytes * 2 });
    // The newest read is kept; the first one was dropped.
    const before = small.stats();
    await wrapped.records.get(handles[3] as string);
    await wrapped.records.get(handles[0] as string);
    expect(small.stats().hits - before.hits).toBe(1);
    expect(small.stats().misses - before.misses).toBe(1);
  });
});
