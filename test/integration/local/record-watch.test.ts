/**
 * The long poll of a status request (`AppRecords.getChanged`) over the real store (dynalite): with local
 * mode's record watch it is held until a write to the record commits; without one (the deployed stack) it
 * answers at once and says it did not wait.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RecordWatch } from '../../../lib/local/record-watch.js';
import { AppRecords, recordRevision } from '../../../lib/runner/index.js';
import { makeAppDef, makeAppHandle } from '../../../lib/specs/index.js';
import { DynamoAppRecordStore } from '../../../lib/store/index.js';
import { type Dynalite, startDynalite } from '../../helpers/dynalite.js';

let db: Dynalite;
let store: DynamoAppRecordStore;
let counter = 0;

beforeAll(async () => {
  db = await startDynalite();
  store = new DynamoAppRecordStore({ tableName: db.tableName, client: db.client });
});
afterAll(() => db.close());

async function newApp(): Promise<string> {
  counter += 1;
  const appId = `echo-${counter}`;
  const handle = makeAppHandle('local_cwd', 'torchx', appId);
  await store.records.create({
    handle,
    scheduler: 'local_cwd',
    session: 'torchx',
    appId,
    nativeName: appId,
    owner: 'alice',
    name: 'echo',
    app: makeAppDef({ name: 'echo' }),
    cfg: {},
    state: 'SUBMITTED',
    createdAt: Date.now(),
  });
  return handle;
}

describe('AppRecords.getChanged', () => {
  it('answers at once without a change feed (the deployed stack), saying it did not wait', async () => {
    const handle = await newApp();
    const records = new AppRecords({ store });
    const seen = recordRevision(await records.get(handle));
    const answer = await records.getChanged(handle, 'alice', seen, { changes: undefined, waitMs: 60_000 });
    expect(answer.waited).toBe(false);
    expect(recordRevision(answer.record)).toBe(seen);
  });

  it('holds the request until a transition commits, then answers the new revision', async () => {
    const handle = await newApp();
    const watch = new RecordWatch();
    const records = new AppRecords({ store: watch.wrap(store) });
    const seen = recordRevision(await records.get(handle));
    const held = records.getChanged(handle, 'alice', seen, { changes: watch, waitMs: 60_000 });
    // Apply the change once the request is listening for it.
    while (watch.waiting === 0) await new Promise((resolve) => setImmediate(resolve));
    await records.applyTransition(handle, {
      state: 'RUNNING',
      eventTime: Date.now(),
      attempt: 0,
      source: 'local',
    });
    const answer = await held;
    expect(answer.waited).toBe(true);
    expect(answer.record.state).toBe('RUNNING');
    expect(recordRevision(answer.record)).not.toBe(seen);
    expect(watch.waiting).toBe(0);
  });

  it('answers the unchanged record when the wait ends, and a different one at once', async () => {
    const handle = await newApp();
    const watch = new RecordWatch();
    const records = new AppRecords({ store: watch.wrap(store) });
    const record = await records.get(handle);
    const unchanged = await records.getChanged(handle, 'alice', recordRevision(record), {
      changes: watch,
      waitMs: 10,
    });
    expect(unchanged).toMatchObject({ waited: true, record: { state: 'SUBMITTED' } });
    expect(recordRevision(unchanged.record)).toBe(recordRevision(record));
    const other = await records.getChanged(handle, 'alice', 'A'.repeat(22), {
      changes: watch,
      waitMs: 60_000,
    });
    expect(recordRevision(other.record)).toBe(recordRevision(record));
    expect(watch.waiting).toBe(0);
  });

  it('answers a waiting request with the record it has when the server stops (the watch closes)', async () => {
    const handle = await newApp();
    const watch = new RecordWatch();
    const records = new AppRecords({ store: watch.wrap(store) });
    const seen = recordRevision(await records.get(handle));
    const held = records.getChanged(handle, 'alice', seen, { changes: watch, waitMs: 60_000 });
    while (watch.waiting === 0) await new Promise((resolve) => setImmediate(resolve));
    watch.close();
    const answer = await held;
    expect(answer).toMatchObject({ waited: true, record: { state: 'SUBMITTED' } });
    // Nothing waits once closed.
    const late = await records.getChanged(handle, 'alice', seen, { changes: watch, waitMs: 60_000 });
    expect(recordRevision(late.record)).toBe(seen);
    expect(watch.waiting).toBe(0);
  });

  it("refuses another owner's app as unknown, without waiting", async () => {
    const handle = await newApp();
    const watch = new RecordWatch();
    const records = new AppRecords({ store: watch.wrap(store) });
    await expect(
      records.getChanged(handle, 'mallory', 'A'.repeat(22), { changes: watch, waitMs: 60_000 }),
    ).rejects.toMatchObject({ code: 'UnknownApp' });
    expect(watch.waiting).toBe(0);
  });
});

describe('recordRevision', () => {
  it('is the same for equal records whatever their key order, and differs when any field does', async () => {
    const handle = await newApp();
    const record = (await store.records.get(handle))!;
    const reordered = Object.fromEntries(Object.entries(record).reverse()) as typeof record;
    expect(recordRevision(reordered)).toBe(recordRevision(record));
    expect(recordRevision({ ...record, cancelRequestedAt: Date.now() })).not.toBe(recordRevision(record));
  });
});
