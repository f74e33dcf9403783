import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AppRecord,
  type AppState,
  HISTORY_HEAD,
  MAX_HISTORY,
  stateRank,
  ValidationError,
} from '../../../lib/specs/index.js';
import type { DynamoAppRecordStore } from '../../../lib/store/index.js';
import { appPartitionKey } from '../../../lib/store/keys.js';
import { type Dynalite, startDynalite } from '../../helpers/dynalite.js';
import { BATCH_LIFECYCLE_WITH_RETRY, event, makeStore, newRecord, T0 } from './fixtures.js';

let db: Dynalite;
let store: DynamoAppRecordStore;
let clock: { now: number };

beforeAll(async () => {
  db = await startDynalite();
  ({ store, clock } = makeStore(db.client, db.tableName, { retentionDays: 7 }));
});
afterAll(() => db.close());

async function rawItem(handle: string): Promise<Record<string, unknown> | undefined> {
  const { Item } = await db.itemClient.get({
    TableName: db.tableName,
    Key: { pk: appPartitionKey(handle), sk: 'A' },
    ConsistentRead: true,
  });
  return Item;
}

async function created(overrides: Parameters<typeof newRecord>[0] = {}): Promise<AppRecord> {
  return (await store.records.create(newRecord(overrides))).record;
}

describe('DynamoAppRecordStore.transition', () => {
  it('applies a Batch lifecycle delivered in order, retry included', async () => {
    const record = await created();
    const outcomes = [];
    for (const t of BATCH_LIFECYCLE_WITH_RETRY)
      outcomes.push(await store.records.transition(record.handle, t));
    expect(outcomes.every((o) => o.applied)).toBe(true);
    const final = await store.records.get(record.handle);
    expect(final).toMatchObject({
      state: 'SUCCEEDED',
      attempt: 2,
      lastEventTime: T0 + 7000,
      reason: 'Essential container in task exited',
    });
    expect(final?.history.map((h) => `${h.from}->${h.to}`)).toEqual([
      'SUBMITTED->PENDING',
      'PENDING->RUNNING',
      'RUNNING->PENDING',
      'PENDING->RUNNING',
      'RUNNING->SUCCEEDED',
    ]);
    expect(final?.history[2]).toEqual({
      from: 'RUNNING',
      to: 'PENDING',
      time: T0 + 4000,
      source: 'event',
      reason: 'RUNNABLE after attempt 1 failed',
    });
  });

  it('reports applied transitions with the previous state, the new record and the version written', async () => {
    const record = await created();
    clock.now = T0 + 99_000;
    const outcome = await store.records.transition(record.handle, event('RUNNING', 0, T0 + 3000));
    expect(outcome).toEqual({
      applied: true,
      previous: 'SUBMITTED',
      record: expect.objectContaining({ state: 'RUNNING', updatedAt: T0 + 99_000 }),
      version: 2,
    });
    expect((await rawItem(record.handle))?.version).toBe(2);
    if (outcome.applied) expect(await store.records.get(record.handle)).toEqual(outcome.record);
  });

  it('treats the same event delivered twice as a duplicate no-op', async () => {
    const record = await created();
    await store.records.transition(record.handle, event('RUNNING', 0, T0 + 3000));
    const before = await rawItem(record.handle);
    const outcome = await store.records.transition(record.handle, event('RUNNING', 0, T0 + 3000));
    expect(outcome).toMatchObject({ applied: false, reason: 'duplicate', record: { state: 'RUNNING' } });
    expect(await rawItem(record.handle)).toEqual(before);
  });

  it('ignores a late event for an earlier state as stale', async () => {
    const record = await created();
    await store.records.transition(record.handle, event('RUNNING', 0, T0 + 3000));
    expect(await store.records.transition(record.handle, event('PENDING', 0, T0 + 1000))).toMatchObject({
      applied: false,
      reason: 'stale',
    });
    expect(await store.records.transition(record.handle, event('PENDING', 0, T0 + 9000))).toMatchObject({
      applied: false,
      reason: 'stale',
    });
    expect((await store.records.get(record.handle))?.state).toBe('RUNNING');
  });

  it('moves a retried Batch job from RUNNING back to PENDING because the attempt grew', async () => {
    const record = await created();
    await store.records.transition(record.handle, event('RUNNING', 0, T0 + 3000));
    const outcome = await store.records.transition(record.handle, event('PENDING', 1, T0 + 4000));
    expect(outcome).toMatchObject({
      applied: true,
      previous: 'RUNNING',
      record: { state: 'PENDING', attempt: 1 },
    });
  });

  it('never leaves a terminal state', async () => {
    const record = await created();
    await store.records.transition(record.handle, event('FAILED', 1, T0 + 5000, { reason: 'exit 1' }));
    for (const t of [
      event('SUCCEEDED', 1, T0 + 6000),
      event('RUNNING', 5, T0 + 9000),
      event('CANCELLED', 9, T0 + 9999),
      event('FAILED', 1, T0 + 5000),
    ]) {
      expect(await store.records.transition(record.handle, t)).toMatchObject({
        applied: false,
        reason: 'terminal',
      });
    }
    expect(await store.records.get(record.handle)).toMatchObject({
      state: 'FAILED',
      reason: 'exit 1',
      attempt: 1,
    });
  });

  it('reports a missing record', async () => {
    expect(await store.records.transition('aws_batch://torchx/q:ghost', event('RUNNING', 0, T0))).toEqual({
      applied: false,
      reason: 'missing',
    });
  });

  it('refreshes details on a later event in the same state without adding history', async () => {
    const record = await created();
    await store.records.transition(record.handle, event('RUNNING', 0, T0 + 3000));
    const roles = [
      {
        role: 'trainer',
        replicas: [
          {
            id: 0,
            state: 'RUNNING' as const,
            role: 'trainer',
            hostname: 'ip-10-0-0-1',
            structuredErrorMsg: '<NONE>',
          },
        ],
      },
    ];
    const outcome = await store.records.transition(
      record.handle,
      event('RUNNING', 0, T0 + 3500, { roles, numRestarts: 1, uiUrl: 'https://console/job' }),
    );
    expect(outcome.applied).toBe(true);
    const stored = await store.records.get(record.handle);
    expect(stored).toMatchObject({
      roles,
      numRestarts: 1,
      uiUrl: 'https://console/job',
      lastEventTime: T0 + 3500,
    });
    expect(stored?.history).toHaveLength(1);
  });

  it('keeps activeKey and no TTL while running, and swaps them when the app finishes', async () => {
    const record = await created();
    clock.now = T0 + 10_000;
    await store.records.transition(record.handle, event('RUNNING', 0, T0 + 3000));
    expect(await rawItem(record.handle)).toMatchObject({ activeKey: 'aws_batch', updatedAt: T0 + 10_000 });
    expect((await rawItem(record.handle))?.expiresAt).toBeUndefined();
    clock.now = T0 + 20_000;
    await store.records.transition(record.handle, event('SUCCEEDED', 1, T0 + 7000));
    const item = await rawItem(record.handle);
    expect(item?.activeKey).toBeUndefined();
    expect(item?.expiresAt).toBe(Math.floor((T0 + 20_000) / 1000) + 7 * 86_400);
    expect(item).toMatchObject({ stateRank: stateRank('SUCCEEDED'), attempt: 1, version: 3 });
  });

  it(`keeps at most MAX_HISTORY (${MAX_HISTORY}) history entries: the first ones and the newest, newest last`, async () => {
    const record = await created();
    let time = T0;
    for (let attempt = 0; attempt < 30; attempt++) {
      await store.records.transition(record.handle, event('PENDING', attempt, time + 10));
      await store.records.transition(record.handle, event('RUNNING', attempt, time + 20));
      time += 20;
    }
    const stored = await store.records.get(record.handle);
    expect(stored?.history).toHaveLength(MAX_HISTORY);
    expect(stored?.history.at(-1)).toMatchObject({ from: 'PENDING', to: 'RUNNING', time });
    // 60 entries: the first HISTORY_HEAD stay, then the newest; the 10 in between are counted as elided.
    expect(stored?.history[0]).toMatchObject({ from: 'SUBMITTED', to: 'PENDING', time: T0 + 10 });
    expect(stored?.history[HISTORY_HEAD]?.time).toBe(time - 10 * (MAX_HISTORY - HISTORY_HEAD - 1));
    expect(stored?.historyElided).toBe(60 - MAX_HISTORY);
  });

  it.each([
    ['eventTime', event('RUNNING', 0, Number.NaN)],
    ['attempt', event('RUNNING', -1, T0)],
    ['attempt', event('RUNNING', 0.5, T0)],
    ['state', event('BOGUS' as AppState, 0, T0)],
  ])('rejects a transition with a bad %s', async (field, t) => {
    const record = await created();
    const error = await store.records.transition(record.handle, t).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).issues[0]?.path).toBe(`transition.${field}`);
  });
});
