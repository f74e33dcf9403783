/** State reasons through the store's transition path (dynalite): reason-only updates and since-when. */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mapStateChangeEvent, type StateChangeEnvelope } from '../../../lib/events/index.js';
import { AppRecords } from '../../../lib/runner/index.js';
import type { AppRecord, AppStateTransition, StateReason } from '../../../lib/specs/index.js';
import type { DynamoAppRecordStore } from '../../../lib/store/index.js';
import { type Dynalite, startDynalite } from '../../helpers/dynalite.js';
import { makeStore, newRecord, T0 } from './fixtures.js';

let db: Dynalite;
let store: DynamoAppRecordStore;

beforeAll(async () => {
  db = await startDynalite();
  ({ store } = makeStore(db.client, db.tableName, { retentionDays: 7 }));
});
afterAll(() => db.close());

const CAPACITY: StateReason = {
  text: 'CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY - Service cannot fulfill the capacity requested for instance type p4d.24xlarge',
  code: 'CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY',
  since: new Date(T0 + 60_000).toISOString(),
  source: 'aws_batch',
};

function pending(stateReason?: StateReason, eventTime = T0): AppStateTransition {
  return {
    state: 'PENDING',
    eventTime,
    attempt: 0,
    source: 'event',
    ...(stateReason ? { stateReason } : {}),
  };
}

async function pendingRecord(): Promise<AppRecord> {
  const { record } = await store.records.create(newRecord());
  const outcome = await store.records.transition(record.handle, pending());
  if (!outcome.applied) throw new Error('setup: PENDING not applied');
  return outcome.record;
}

function fixture(name: string): StateChangeEnvelope {
  const url = new URL(`../../fixtures/aws-batch/events/${name}.json`, import.meta.url);
  return JSON.parse(readFileSync(url, 'utf8')) as StateChangeEnvelope;
}

describe('DynamoAppRecordStore.transition with state reasons', () => {
  it('applies a reason that arrives for the same state at the same event time (Batch RUNNABLE → blocked)', async () => {
    const record = await pendingRecord();
    const outcome = await store.records.transition(record.handle, pending(CAPACITY));
    expect(outcome.applied).toBe(true);
    const stored = await store.records.get(record.handle);
    expect(stored?.state).toBe('PENDING');
    expect(stored?.stateReason).toEqual(CAPACITY);
    expect(stored?.lastEventTime).toBe(T0);
    // Same state: no history entry for a reason.
    expect(stored?.history.map((h) => h.to)).toEqual(['PENDING']);
  });

  it('keeps since-when when the same reason is reported again later', async () => {
    const record = await pendingRecord();
    await store.records.transition(record.handle, pending(CAPACITY));
    const later = { ...CAPACITY, since: new Date(T0 + 40 * 60_000).toISOString() };
    // The same reason again, in a fresher report (a later describe): nothing new to say.
    const repeat = await store.records.transition(record.handle, pending(later));
    expect(repeat).toMatchObject({ applied: false, reason: 'duplicate' });
    // A fresher event with the same reason applies, and still holds since the first report.
    await store.records.transition(record.handle, pending(later, T0 + 1));
    expect((await store.records.get(record.handle))?.stateReason?.since).toBe(CAPACITY.since);
  });

  it('turns away an older reason delivered after a newer one', async () => {
    const record = await pendingRecord();
    await store.records.transition(record.handle, pending(CAPACITY));
    const older: StateReason = {
      text: 'MISCONFIGURATION:JOB_RESOURCE_REQUIREMENT - …',
      code: 'MISCONFIGURATION:JOB_RESOURCE_REQUIREMENT',
      since: new Date(T0 + 1_000).toISOString(),
      source: 'aws_batch',
    };
    expect(await store.records.transition(record.handle, pending(older))).toMatchObject({ applied: false });
    expect((await store.records.get(record.handle))?.stateReason).toEqual(CAPACITY);
  });

  it('drops the reason when the app moves on to RUNNING without one, and never leaves a terminal state for a reason', async () => {
    const record = await pendingRecord();
    await store.records.transition(record.handle, pending(CAPACITY));
    await store.records.transition(record.handle, {
      state: 'RUNNING',
      eventTime: T0 + 5,
      attempt: 0,
      source: 'event',
    });
    expect((await store.records.get(record.handle))?.stateReason).toBeUndefined();
    await store.records.transition(record.handle, {
      state: 'FAILED',
      eventTime: T0 + 9,
      attempt: 0,
      source: 'event',
    });
    const late = await store.records.transition(record.handle, {
      state: 'FAILED',
      eventTime: T0 + 9,
      attempt: 0,
      source: 'event',
      stateReason: { ...CAPACITY, since: new Date(T0 + 10 ** 6).toISOString() },
    });
    expect(late).toMatchObject({ applied: false, reason: 'terminal' });
  });
});

describe('a Batch Job Queue Blocked event', () => {
  it('gives its reason to the blocking job and to the apps waiting in the same queue, not to others', async () => {
    const blocked = fixture('batch-queue-blocked');
    const routed = mapStateChangeEvent(blocked);
    if ('ignored' in routed) throw new Error(routed.ignored);
    const records = new AppRecords({ store, lateIndexDelaysMs: [] });
    const head = await store.records.create(
      newRecord({ appId: 'ml-gpu-queue:ctl-run-01hzx7k2-train', nativeName: 'ctl-run-01hzx7k2-train' }),
    );
    await store.records.transition(head.record.handle, pending(undefined, 1_735_732_800_000));
    const behind = (
      await store.records.create(newRecord({ appId: 'ml-gpu-queue:behind-1', nativeName: 'behind-1' }))
    ).record;
    await store.records.transition(behind.handle, pending());
    const elsewhere = (
      await store.records.create(newRecord({ appId: 'cpu-queue:other-1', nativeName: 'other-1' }))
    ).record;
    await store.records.transition(elsewhere.handle, pending());

    const outcome = await records.applyNativeTransition(
      routed.scheduler,
      routed.nativeName,
      routed.transition,
      {
        ...(routed.appId !== undefined ? { appId: routed.appId } : {}),
      },
    );
    expect(outcome?.applied).toBe(true);
    expect(routed.queueBlocked).toBeDefined();
    const { inQueue, stateReason } = routed.queueBlocked ?? { inQueue: () => false, stateReason: CAPACITY };
    expect(await records.applyWaitingReason('aws_batch', inQueue, stateReason)).toBeGreaterThanOrEqual(1);

    const headReason = (await store.records.get(head.record.handle))?.stateReason;
    expect(headReason?.code).toBe('CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY');
    expect(headReason?.since).toBe('2025-01-01T12:42:00.000Z');
    const behindReason = (await store.records.get(behind.handle))?.stateReason;
    expect(behindReason?.code).toBe('CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY');
    expect(behindReason?.text).toMatch(/^the queue is blocked by job ctl-run-01hzx7k2-train: CAPACITY:/);
    expect((await store.records.get(elsewhere.handle))?.stateReason).toBeUndefined();
  });
});
