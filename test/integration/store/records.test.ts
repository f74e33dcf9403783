import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UnknownAppError, ValidationError } from '../../../lib/specs/index.js';
import {
  DEFAULT_RETENTION_DAYS,
  type DynamoAppRecordStore,
  MAX_NEW_RECORD_BYTES,
} from '../../../lib/store/index.js';
import { appPartitionKey } from '../../../lib/store/keys.js';
import { type Dynalite, startDynalite } from '../../helpers/dynalite.js';
import { ALICE, event, makeStore, newRecord, T0 } from './fixtures.js';

let db: Dynalite;
let store: DynamoAppRecordStore;
let clock: { now: number };

beforeAll(async () => {
  db = await startDynalite();
  ({ store, clock } = makeStore(db.client, db.tableName));
});
afterAll(() => db.close());

async function rawItem(handle: string): Promise<Record<string, unknown> | undefined> {
  // A malformed handle has no key: nothing can have been stored under it.
  if (!handle.includes('://')) return undefined;
  const { Item } = await db.itemClient.get({
    TableName: db.tableName,
    Key: { pk: appPartitionKey(handle), sk: 'A' },
    ConsistentRead: true,
  });
  return Item;
}

describe('DynamoAppRecordStore.create', () => {
  it('stores a new record with defaults and returns created: true', async () => {
    const input = newRecord();
    const { record, created } = await store.records.create(input);
    expect(created).toBe(true);
    expect(record).toEqual({
      ...input,
      roles: [],
      numRestarts: 0,
      attempt: 0,
      lastEventTime: input.createdAt,
      updatedAt: input.createdAt,
      history: [],
    });
    expect(await store.records.get(input.handle)).toEqual(record);
  });

  it('creates once: a second create returns created: false and the original record', async () => {
    const input = newRecord();
    const first = await store.records.create(input);
    const second = await store.records.create({
      ...input,
      name: 'impostor',
      state: 'RUNNING',
      createdAt: T0 + 5,
    });
    expect(second.created).toBe(false);
    expect(second.record).toEqual(first.record);
    expect((await store.records.get(input.handle))?.name).toBe('trainer');
  });

  it('lets exactly one of many concurrent creates of the same handle win', async () => {
    const input = newRecord();
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => store.records.create({ ...input, name: `attempt-${i}` })),
    );
    const winners = results.filter((r) => r.created);
    expect(winners).toHaveLength(1);
    for (const result of results) expect(result.record).toEqual(winners[0]?.record);
  });

  it('writes the index keys and the version next to the record', async () => {
    const input = newRecord({ createdAt: T0 + 123 });
    await store.records.create(input);
    expect(await rawItem(input.handle)).toMatchObject({
      entity: 'App',
      ownerKey: ALICE,
      createdKey: `00${T0 + 123}#${input.handle}`,
      nativeKey: `aws_batch#${input.nativeName}`,
      activeKey: 'aws_batch',
      stateRank: 1,
      version: 1,
    });
    expect((await rawItem(input.handle))?.expiresAt).toBeUndefined();
  });

  it('gives a record created in a terminal state a TTL and no activeKey', async () => {
    const input = newRecord({ state: 'FAILED', reason: 'submit failed' });
    await store.records.create(input);
    const item = await rawItem(input.handle);
    expect(item?.activeKey).toBeUndefined();
    expect(item?.expiresAt).toBe(Math.floor(input.createdAt / 1000) + DEFAULT_RETENTION_DAYS * 86_400);
  });

  it('keeps optional fields only when given', async () => {
    const input = newRecord({ idempotencyKey: 'key-1', uiUrl: 'https://console.aws.amazon.com/batch' });
    const { record } = await store.records.create(input);
    expect(record.idempotencyKey).toBe('key-1');
    expect(record.uiUrl).toBe('https://console.aws.amazon.com/batch');
    expect('reason' in record).toBe(false);
    expect('reason' in ((await store.records.get(input.handle)) ?? {})).toBe(false);
  });

  it.each([
    ['owner', { owner: '' }],
    ['nativeName', { nativeName: '' }],
    ['scheduler', { scheduler: '', handle: 'x://torchx/a' }],
    ['createdAt', { createdAt: -1 }],
    ['handle', { handle: 'not-a-handle' }],
    ['handle', { handle: 'aws_sagemaker://torchx/a' }],
  ])('rejects a record with a bad %s before writing', async (path, overrides) => {
    const input = newRecord(overrides);
    const error = await store.records.create(input).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).issues.map((issue) => issue.path)).toContain(path);
    expect(await rawItem(input.handle)).toBeUndefined();
  });

  it('rejects an app too large for a DynamoDB item with a ValidationError naming app', async () => {
    const input = newRecord();
    const role = input.app.roles[0]!;
    input.app.roles = [{ ...role, env: { ...role.env, BLOB: 'x'.repeat(MAX_NEW_RECORD_BYTES) } }];
    const error = await store.records.create(input).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).issues).toEqual([
      { path: 'app', message: expect.stringContaining('at most 300 KB') },
    ]);
    expect(await rawItem(input.handle)).toBeUndefined();
  });

  it('accepts an app just under the size budget', async () => {
    const input = newRecord();
    const role = input.app.roles[0]!;
    input.app.roles = [{ ...role, env: { ...role.env, BLOB: 'x'.repeat(MAX_NEW_RECORD_BYTES - 2048) } }];
    expect((await store.records.create(input)).created).toBe(true);
  });
});

describe('DynamoAppRecordStore.get', () => {
  it('returns undefined for an unknown handle', async () => {
    expect(await store.records.get('aws_batch://torchx/q:nope')).toBeUndefined();
  });

  it('treats a record past its TTL as gone (DynamoDB deletes expired items only eventually)', async () => {
    const input = newRecord({ state: 'SUCCEEDED' });
    await store.records.create(input);
    const expiresAt = Math.floor(input.createdAt / 1000) + DEFAULT_RETENTION_DAYS * 86_400;
    clock.now = expiresAt * 1000 + 1000;
    try {
      expect(await store.records.get(input.handle)).toBeUndefined();
      expect(await rawItem(input.handle)).toBeDefined();
    } finally {
      clock.now = T0 + 60_000;
    }
    expect(await store.records.get(input.handle)).toBeDefined();
  });
});

describe('DynamoAppRecordStore.findByNativeName', () => {
  it('finds the record by scheduler and native name', async () => {
    const input = newRecord({ nativeName: 'ddp-k3x9', appId: 'gpu-queue:ddp-k3x9' });
    const { record } = await store.records.create(input);
    expect(await store.queries.findByNativeName('aws_batch', 'ddp-k3x9')).toEqual(record);
  });

  it('does not confuse schedulers with the same native name', async () => {
    await store.records.create(newRecord({ nativeName: 'shared-name', appId: 'q:shared-name' }));
    const sagemaker = newRecord({
      scheduler: 'aws_sagemaker',
      nativeName: 'shared-name',
      appId: 'shared-name',
    });
    await store.records.create(sagemaker);
    expect((await store.queries.findByNativeName('aws_sagemaker', 'shared-name'))?.handle).toBe(
      sagemaker.handle,
    );
    expect((await store.queries.findByNativeName('aws_batch', 'shared-name'))?.scheduler).toBe('aws_batch');
  });

  it('returns the newest record when a native name was reused', async () => {
    await store.records.create(newRecord({ nativeName: 'reused', appId: 'q1:reused', createdAt: T0 }));
    const newer = newRecord({ nativeName: 'reused', appId: 'q2:reused', createdAt: T0 + 10 });
    await store.records.create(newer);
    expect((await store.queries.findByNativeName('aws_batch', 'reused'))?.handle).toBe(newer.handle);
  });

  it('returns the current record, not the index copy', async () => {
    const input = newRecord();
    await store.records.create(input);
    await store.records.transition(input.handle, event('RUNNING', 0, T0 + 5));
    expect((await store.queries.findByNativeName('aws_batch', input.nativeName))?.state).toBe('RUNNING');
  });

  it('returns undefined when nothing matches', async () => {
    expect(await store.queries.findByNativeName('aws_batch', 'no-such-job')).toBeUndefined();
    expect(await store.queries.findByNativeName('', '')).toBeUndefined();
  });
});

describe('DynamoAppRecordStore.markCancelRequested', () => {
  it('records the first cancel request and keeps it on repeats', async () => {
    const input = newRecord();
    await store.records.create(input);
    await store.records.markCancelRequested(input.handle, T0 + 100);
    await store.records.markCancelRequested(input.handle, T0 + 200);
    expect((await store.records.get(input.handle))?.cancelRequestedAt).toBe(T0 + 100);
  });

  it('does not disturb transitions', async () => {
    const input = newRecord();
    await store.records.create(input);
    await store.records.markCancelRequested(input.handle, T0 + 100);
    const outcome = await store.records.transition(input.handle, event('CANCELLED', 0, T0 + 150));
    expect(outcome.applied).toBe(true);
    expect(await store.records.get(input.handle)).toMatchObject({
      state: 'CANCELLED',
      cancelRequestedAt: T0 + 100,
    });
  });

  it('throws UnknownAppError for an unknown handle', async () => {
    await expect(store.records.markCancelRequested('aws_batch://torchx/q:ghost', T0)).rejects.toBeInstanceOf(
      UnknownAppError,
    );
  });
});

describe('DynamoAppRecordStore keys', () => {
  it('finds a record under any session of its handle (records are keyed by scheduler and app id)', async () => {
    const input = newRecord({ handle: 'aws_batch://s1/q:keyed-by-app-id', appId: 'q:keyed-by-app-id' });
    await store.records.create(input);
    const found = await store.records.get('aws_batch://another-session/q:keyed-by-app-id');
    expect(found?.handle).toBe('aws_batch://s1/q:keyed-by-app-id');
    expect(await store.records.get('aws_sagemaker://s1/q:keyed-by-app-id')).toBeUndefined();
  });
});
