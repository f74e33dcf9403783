/**
 * Runner › applyNativeTransition when the name index lags (GSIs are eventually consistent): the real store
 * (dynalite) behind a wrapper whose index answers empty for the first lookups.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AppRecordStore, type RecordQueries, Runner } from '../../../lib/runner/index.js';
import { SchedulerRegistry } from '../../../lib/schedulers/index.js';
import { makeAppDef } from '../../../lib/specs/index.js';
import { DynamoAppRecordStore } from '../../../lib/store/index.js';
import { type Dynalite, startDynalite } from '../../helpers/dynalite.js';

let db: Dynalite;
beforeAll(async () => {
  db = await startDynalite();
});
afterAll(() => db.close());

const T0 = 1_700_000_000_000;

/** `store` whose name index does not have a record for the first `misses` lookups. */
function lagging(store: AppRecordStore, misses: number): AppRecordStore & { lookups: number } {
  const queries = Object.create(store.queries) as RecordQueries;
  const wrapper = { records: store.records, queries, idempotency: store.idempotency, lookups: 0 };
  queries.findByNativeName = async (scheduler, nativeName) => {
    wrapper.lookups += 1;
    return wrapper.lookups <= misses ? undefined : store.queries.findByNativeName(scheduler, nativeName);
  };
  return wrapper;
}

async function setup(misses: number) {
  const tableName = await db.createTable();
  const real = new DynamoAppRecordStore({ tableName, client: db.client, now: () => T0 });
  await real.records.create({
    handle: 'aws_batch://torchx/q:job-1',
    scheduler: 'aws_batch',
    session: 'torchx',
    appId: 'q:job-1',
    nativeName: 'job-1',
    owner: 'alice',
    name: 'job',
    app: makeAppDef({ name: 'job' }),
    cfg: {},
    state: 'SUBMITTED',
    createdAt: T0,
  });
  const store = lagging(real, misses);
  const slept: number[] = [];
  const runner = new Runner({
    schedulers: new SchedulerRegistry({}, { sessionName: 'torchx' }),
    store,
    now: () => T0,
    sleep: async (ms) => void slept.push(ms),
    lateIndexDelaysMs: [100, 300, 900],
  });
  const misses_: { lookup: number; last: boolean }[] = [];
  const observe = { onIndexMiss: (lookup: number, last: boolean) => void misses_.push({ lookup, last }) };
  return { runner, store, real, slept, observe, misses: misses_ };
}

const RUNNING = { state: 'RUNNING' as const, attempt: 0, eventTime: T0 + 10, source: 'event' as const };

describe('Runner › applyNativeTransition with a lagging name index', () => {
  it('looks the record up again with back-off and applies the event once the index has it', async () => {
    const h = await setup(2);
    const outcome = await h.runner.applyNativeTransition('aws_batch', 'job-1', RUNNING, h.observe);
    expect(outcome).toMatchObject({ applied: true, previous: 'SUBMITTED' });
    expect((await h.real.records.get('aws_batch://torchx/q:job-1'))?.state).toBe('RUNNING');
    expect(h.slept).toEqual([100, 300]);
    expect(h.misses).toEqual([
      { lookup: 1, last: false },
      { lookup: 2, last: false },
    ]);
  });

  it('gives the event up as foreign after the last try, and says so to the observer', async () => {
    const h = await setup(10);
    expect(await h.runner.applyNativeTransition('aws_batch', 'job-1', RUNNING, h.observe)).toBeUndefined();
    expect(h.store.lookups).toBe(4);
    expect(h.slept).toEqual([100, 300, 900]);
    expect(h.misses.at(-1)).toEqual({ lookup: 4, last: true });
    expect((await h.real.records.get('aws_batch://torchx/q:job-1'))?.state).toBe('SUBMITTED');
  });

  it('does not wait when the index answers at once', async () => {
    const h = await setup(0);
    expect(await h.runner.applyNativeTransition('aws_batch', 'job-1', RUNNING, h.observe)).toMatchObject({
      applied: true,
    });
    expect(h.slept).toEqual([]);
    expect(h.misses).toEqual([]);
  });
});
