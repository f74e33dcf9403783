/**
 * Runner › run under crashes and hung backends, over the real store (dynalite): an Idempotency-Key
 * reservation belongs to the request that made it, with a lease; a retry after the lease takes over and the
 * job is submitted once; a hung submission answers SubmissionOutcomeUnknown at the deadline.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  IdempotencyConflictError,
  IdempotencyInProgressError,
  Runner,
  SubmissionOutcomeUnknownError,
} from '../../../lib/runner/index.js';
import { SchedulerRegistry } from '../../../lib/schedulers/index.js';
import { makeAppDef, makeResource, makeRole } from '../../../lib/specs/index.js';
import { DynamoAppRecordStore, StoreUnavailableError } from '../../../lib/store/index.js';
import { type Dynalite, startDynalite } from '../../helpers/dynalite.js';
import { FakeScheduler } from '../../helpers/fake-scheduler.js';

let db: Dynalite;
beforeAll(async () => {
  db = await startDynalite();
});
afterAll(() => db.close());

const OWNER = 'arn:aws:iam::123456789012:user/alice';
const LEASE_MS = 30_000;

function app(script = 'train.py') {
  return makeAppDef({
    name: 'trainer',
    roles: [
      makeRole({
        name: 'trainer',
        image: 'img',
        entrypoint: 'python',
        args: [script],
        resource: makeResource({ cpu: 1, gpu: 0, memMB: 512 }),
      }),
    ],
  });
}

async function harness() {
  const tableName = await db.createTable();
  const clock = { now: 1_700_000_000_000 };
  const now = () => clock.now;
  const sleep = async (ms: number) => {
    clock.now += ms;
  };
  let fake: FakeScheduler | undefined;
  const registry = new SchedulerRegistry(
    {
      fake: (ctx) => {
        fake = new FakeScheduler({ ...ctx, now });
        return fake;
      },
    },
    { sessionName: 'torchx', now, sleep },
  );
  const store = new DynamoAppRecordStore({ tableName, client: db.client, now });
  const runner = new Runner({ schedulers: registry, store, now, sleep, idempotencyLeaseMs: LEASE_MS });
  registry.get('fake');
  return { runner, store, fake: fake as FakeScheduler, clock };
}

const schedules = (fake: FakeScheduler) => fake.calls.filter((c) => c === 'schedule').length;

describe('Runner › run with an Idempotency-Key after a crash', () => {
  it('takes over the reservation once the lease has ended and returns the job the crashed request submitted', async () => {
    const h = await harness();
    const ctx = { owner: OWNER, idempotencyKey: 'crash-after-accept' };
    h.fake.hangNextSchedule = 'after-accept';
    void h.runner.run(app(), 'fake', { queue: 'q' }, ctx); // the function dies inside SubmitJob
    await expect.poll(() => h.fake.jobs.size).toBe(1);

    // Before the lease ends the holder may still be alive: the retry waits, then answers "in progress".
    await expect(h.runner.run(app(), 'fake', { queue: 'q' }, ctx)).rejects.toBeInstanceOf(
      IdempotencyInProgressError,
    );
    h.clock.now += LEASE_MS;
    const retry = await h.runner.run(app(), 'fake', { queue: 'q' }, ctx);
    const [appId] = [...h.fake.jobs.keys()];
    expect(retry).toMatchObject({ handle: `fake://torchx/${appId}`, created: false });
    expect(retry.record.state).toBe('PENDING');
    expect(schedules(h.fake)).toBe(1);
    expect(h.fake.jobs.size).toBe(1);
    // The key is now completed: a third attempt is a plain replay.
    expect(await h.runner.run(app(), 'fake', { queue: 'q' }, ctx)).toMatchObject({
      handle: retry.handle,
      created: false,
    });
    expect(schedules(h.fake)).toBe(1);
  });

  it('submits once when the crashed request never reached the scheduler, and marks its record FAILED', async () => {
    const h = await harness();
    const ctx = { owner: OWNER, idempotencyKey: 'crash-before-accept' };
    h.fake.hangNextSchedule = 'before-accept';
    void h.runner.run(app(), 'fake', { queue: 'q' }, ctx);
    await expect.poll(() => schedules(h.fake)).toBe(1);
    const [abandoned] = (await h.store.queries.list({ owner: OWNER })).records;
    expect(abandoned?.state).toBe('UNSUBMITTED');

    h.clock.now += LEASE_MS;
    const retry = await h.runner.run(app(), 'fake', { queue: 'q' }, ctx);
    expect(retry.created).toBe(true);
    expect(retry.handle).not.toBe(abandoned?.handle);
    expect(h.fake.jobs.size).toBe(1);
    const old = await h.store.records.get(abandoned?.handle ?? '');
    expect(old).toMatchObject({ state: 'FAILED' });
    expect(old?.reason).toContain(`retried as ${retry.handle}`);
    expect(await h.runner.run(app(), 'fake', { queue: 'q' }, ctx)).toMatchObject({
      handle: retry.handle,
      created: false,
    });
  });

  it('returns the handle of a reservation whose record the reconciler already settled, without waiting', async () => {
    const h = await harness();
    const ctx = { owner: OWNER, idempotencyKey: 'settled-by-reconciler' };
    h.fake.hangNextSchedule = 'after-accept';
    void h.runner.run(app(), 'fake', { queue: 'q' }, ctx);
    await expect.poll(() => h.fake.jobs.size).toBe(1);
    const [appId] = [...h.fake.jobs.keys()];
    h.fake.advance(appId ?? '', 'SUCCEEDED');
    expect(await h.runner.reconcile('fake')).toMatchObject({ checked: 1, changed: 1 });

    const before = h.clock.now;
    const retry = await h.runner.run(app(), 'fake', { queue: 'q' }, ctx);
    expect(retry).toMatchObject({ handle: `fake://torchx/${appId}`, created: false });
    expect(retry.record.state).toBe('SUCCEEDED');
    expect(h.clock.now).toBe(before);
    expect(schedules(h.fake)).toBe(1);
  });

  it('still answers 422 IdempotencyConflict for the same key with a different body, even after the lease', async () => {
    const h = await harness();
    const ctx = { owner: OWNER, idempotencyKey: 'conflict' };
    h.fake.hangNextSchedule = 'before-accept';
    void h.runner.run(app(), 'fake', { queue: 'q' }, ctx);
    await expect.poll(() => schedules(h.fake)).toBe(1);
    h.clock.now += LEASE_MS;
    await expect(h.runner.run(app('other.py'), 'fake', { queue: 'q' }, ctx)).rejects.toBeInstanceOf(
      IdempotencyConflictError,
    );
    expect(schedules(h.fake)).toBe(1);
  });
});

describe('Runner › run when completing the key fails after the job was accepted', () => {
  it('answers with the handle, keeps the key, and a retry returns the same app without submitting again', async () => {
    const h = await harness();
    const ctx = { owner: OWNER, idempotencyKey: 'complete-fails' };
    const complete = h.store.idempotency.complete.bind(h.store.idempotency);
    h.store.idempotency.complete = async () => {
      throw new StoreUnavailableError('DynamoDB UpdateItem failed after retries (injected)');
    };
    const first = await h.runner.run(app(), 'fake', { queue: 'q' }, ctx);
    expect(first.created).toBe(true);
    h.store.idempotency.complete = complete;
    const retry = await h.runner.run(app(), 'fake', { queue: 'q' }, ctx);
    expect(retry).toMatchObject({ handle: first.handle, created: false });
    expect(schedules(h.fake)).toBe(1);
  });
});

describe('Runner › run with a deadline', () => {
  it('answers SubmissionOutcomeUnknown with the handle when the scheduler hangs, and the reconciler settles the record', async () => {
    const h = await harness();
    h.fake.hangNextSchedule = 'after-accept';
    const ctx = { owner: OWNER, idempotencyKey: 'hung', deadline: h.clock.now + 50 };
    const error = await h.runner.run(app(), 'fake', { queue: 'q' }, ctx).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SubmissionOutcomeUnknownError);
    const { handle } = error as SubmissionOutcomeUnknownError;
    expect((await h.store.records.get(handle))?.state).toBe('UNSUBMITTED');
    // A retry with the key gets the handle and submits nothing.
    expect(
      await h.runner.run(app(), 'fake', { queue: 'q' }, { owner: OWNER, idempotencyKey: 'hung' }),
    ).toMatchObject({ handle, created: false });
    await h.runner.reconcile('fake');
    expect((await h.store.records.get(handle))?.state).toBe('PENDING');
    expect(schedules(h.fake)).toBe(1);
  });
});
