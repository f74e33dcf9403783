import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AppRecord, type AppState, ValidationError } from '../../../lib/specs/index.js';
import type { DynamoAppRecordStore } from '../../../lib/store/index.js';
import { type Dynalite, startDynalite } from '../../helpers/dynalite.js';
import { ALICE, BOB, event, makeStore, newRecord, T0 } from './fixtures.js';

let db: Dynalite;
let store: DynamoAppRecordStore;

/** 120 records of ALICE, created one second apart, cycling through schedulers, sessions and states. */
const SCHEDULERS = ['aws_batch', 'aws_sagemaker', 'local_cwd'] as const;
const SESSIONS = ['torchx', 'nightly'] as const;
const FINAL_STATES: AppState[] = ['SUBMITTED', 'RUNNING', 'SUCCEEDED', 'FAILED'];
const COUNT = 120;
const handles: string[] = [];

interface Seeded {
  handle: string;
  scheduler: string;
  session: string;
  state: AppState;
  createdAt: number;
}
const seeded: Seeded[] = [];

beforeAll(async () => {
  db = await startDynalite();
  ({ store } = makeStore(db.client, db.tableName));
  await Promise.all(
    Array.from({ length: COUNT }, async (_, i) => {
      const scheduler = SCHEDULERS[i % SCHEDULERS.length] ?? 'aws_batch';
      const session = SESSIONS[Math.floor(i / 3) % SESSIONS.length] ?? 'torchx';
      const state = FINAL_STATES[i % FINAL_STATES.length] ?? 'SUBMITTED';
      const input = newRecord({
        scheduler,
        session,
        appId: `app-${String(i).padStart(3, '0')}`,
        createdAt: T0 + i * 1000,
      });
      await store.records.create(input);
      if (state !== 'SUBMITTED')
        await store.records.transition(input.handle, event(state, 0, T0 + i * 1000 + 1));
      handles[i] = input.handle;
      seeded[i] = { handle: input.handle, scheduler, session, state, createdAt: input.createdAt };
    }),
  );
  await store.records.create(newRecord({ owner: BOB, createdAt: T0 + 5000 }));
});
afterAll(() => db.close());

/** Handles newest first among the seeded records that match. */
function expected(match: (s: Seeded) => boolean): string[] {
  return seeded
    .filter(match)
    .sort((a, b) => b.createdAt - a.createdAt)
    .map((s) => s.handle);
}

async function listAll(query: Omit<Parameters<DynamoAppRecordStore['queries']['list']>[0], 'nextToken'>) {
  const pages: string[][] = [];
  let nextToken: string | undefined;
  do {
    const page = await store.queries.list({ ...query, ...(nextToken ? { nextToken } : {}) });
    pages.push(page.records.map((r) => r.handle));
    nextToken = page.nextToken;
  } while (nextToken && pages.length < 50);
  return pages;
}

describe('DynamoAppRecordStore.list', () => {
  it('returns an owner’s records newest first, 50 by default', async () => {
    const page = await store.queries.list({ owner: ALICE });
    expect(page.records.map((r) => r.handle)).toEqual(expected(() => true).slice(0, 50));
    expect(page.nextToken).toEqual(expect.any(String));
  });

  it('pages through 120 records with limit 50 with no duplicates and no gaps', async () => {
    const pages = await listAll({ owner: ALICE, limit: 50 });
    expect(pages.map((p) => p.length)).toEqual([50, 50, 20]);
    expect(pages.flat()).toEqual(expected(() => true));
  });

  it('ends without a token when the last page is exactly full', async () => {
    const pages = await listAll({ owner: ALICE, limit: 40 });
    expect(pages.map((p) => p.length)).toEqual([40, 40, 40]);
  });

  it('shows only the owner’s own records', async () => {
    const page = await store.queries.list({ owner: BOB });
    expect(page.records).toHaveLength(1);
    expect(page.records[0]?.owner).toBe(BOB);
    expect(page.nextToken).toBeUndefined();
    expect((await store.queries.list({ owner: 'arn:aws:iam::123456789012:user/nobody' })).records).toEqual(
      [],
    );
  });

  it('filters by scheduler across pages', async () => {
    const pages = await listAll({ owner: ALICE, scheduler: 'aws_sagemaker', limit: 15 });
    expect(pages.flat()).toEqual(expected((s) => s.scheduler === 'aws_sagemaker'));
    expect(pages.slice(0, -1).every((p) => p.length === 15)).toBe(true);
  });

  it('filters by any of several states', async () => {
    const pages = await listAll({ owner: ALICE, states: ['FAILED', 'SUCCEEDED'], limit: 25 });
    expect(pages.flat()).toEqual(expected((s) => s.state === 'FAILED' || s.state === 'SUCCEEDED'));
  });

  it('treats an empty state list as any state', async () => {
    expect(
      (await store.queries.list({ owner: ALICE, states: [], limit: 5 })).records.map((r) => r.handle),
    ).toEqual(expected(() => true).slice(0, 5));
  });

  it('filters by session', async () => {
    const pages = await listAll({ owner: ALICE, session: 'nightly', limit: 50 });
    expect(pages.flat()).toEqual(expected((s) => s.session === 'nightly'));
  });

  it('returns records created at or after `since`', async () => {
    const since = T0 + 100 * 1000;
    const pages = await listAll({ owner: ALICE, since, limit: 7 });
    expect(pages.flat()).toEqual(expected((s) => s.createdAt >= since));
    expect(pages.flat()).toHaveLength(20);
  });

  it('combines filters', async () => {
    const pages = await listAll({
      owner: ALICE,
      scheduler: 'aws_batch',
      session: 'torchx',
      states: ['RUNNING', 'SUBMITTED'],
      since: T0 + 30_000,
      limit: 3,
    });
    const match = (s: Seeded) =>
      s.scheduler === 'aws_batch' &&
      s.session === 'torchx' &&
      (s.state === 'RUNNING' || s.state === 'SUBMITTED') &&
      s.createdAt >= T0 + 30_000;
    expect(pages.flat()).toEqual(expected(match));
    expect(pages.flat().length).toBeGreaterThan(3);
  });

  it('hides records past their TTL', async () => {
    const expiredOwner = 'arn:aws:iam::123456789012:user/expired';
    const gone = newRecord({ owner: expiredOwner, state: 'SUCCEEDED', createdAt: T0 - 200 * 86_400_000 });
    const kept = newRecord({ owner: expiredOwner, createdAt: T0 - 200 * 86_400_000 + 1 });
    await store.records.create(gone);
    await store.records.create(kept);
    expect((await store.queries.list({ owner: expiredOwner })).records.map((r) => r.handle)).toEqual([
      kept.handle,
    ]);
  });

  it.each([
    ['nextToken', { nextToken: 'garbage!' }],
    ['nextToken', { nextToken: Buffer.from('{"v":1,"i":"o","c":"nope"}').toString('base64url') }],
    ['nextToken', { nextToken: Buffer.from('[1,2]').toString('base64url') }],
    ['nextToken', { nextToken: Buffer.from('{"v":1,"i":"a","u":1,"h":"x"}').toString('base64url') }],
    ['limit', { limit: 0 }],
    ['limit', { limit: 101 }],
    ['limit', { limit: 2.5 }],
    ['since', { since: -5 }],
    ['states.1', { states: ['RUNNING', 'running'] as AppState[] }],
    ['owner', { owner: '' }],
  ])('rejects a bad %s with a ValidationError naming it', async (path, query) => {
    const error = await store.queries.list({ owner: ALICE, ...query }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).issues.map((issue) => issue.path)).toEqual([path]);
  });

  it('returns nothing when the token is already older than `since`', async () => {
    const first = await store.queries.list({ owner: ALICE, limit: 100 });
    expect(first.nextToken).toBeDefined();
    const page = await store.queries.list({
      owner: ALICE,
      since: T0 + 100_000,
      nextToken: first.nextToken ?? '',
    });
    expect(page).toEqual({ records: [] });
  });
});

describe('DynamoAppRecordStore.listActive', () => {
  it('lists only non-terminal records of the scheduler, least recently updated first', async () => {
    const table = await db.createTable();
    const { store: fresh, clock: freshClock } = makeStore(db.client, table);
    const batch: AppRecord[] = [];
    for (let i = 0; i < 7; i++) {
      freshClock.now = T0 + i;
      batch.push((await fresh.records.create(newRecord({ createdAt: T0 + i }))).record);
    }
    await fresh.records.create(newRecord({ scheduler: 'aws_sagemaker', appId: 'sm-1' }));
    freshClock.now = T0 + 100;
    await fresh.records.transition(batch[0]!.handle, event('RUNNING', 0, T0 + 50));
    await fresh.records.transition(batch[1]!.handle, event('SUCCEEDED', 0, T0 + 50));
    await fresh.records.transition(batch[2]!.handle, event('CANCELLED', 0, T0 + 50));

    const pages: string[][] = [];
    let nextToken: string | undefined;
    do {
      const page = await fresh.queries.listActive('aws_batch', 2, nextToken);
      pages.push(page.records.map((r) => r.handle));
      nextToken = page.nextToken;
    } while (nextToken);
    expect(pages.flat()).toEqual([3, 4, 5, 6, 0].map((i) => batch[i]!.handle));
    expect(pages.map((p) => p.length)).toEqual([2, 2, 1]);
    expect((await fresh.queries.listActive('aws_sagemaker')).records.map((r) => r.appId)).toEqual(['sm-1']);
    expect((await fresh.queries.listActive('local_cwd')).records).toEqual([]);
  });

  it('rejects a list token as a listActive token', async () => {
    const { nextToken } = await store.queries.list({ owner: ALICE, limit: 1 });
    await expect(store.queries.listActive('aws_batch', 10, nextToken)).rejects.toMatchObject({
      issues: [{ path: 'nextToken' }],
    });
  });

  it('rejects a bad limit', async () => {
    await expect(store.queries.listActive('aws_batch', 0)).rejects.toBeInstanceOf(ValidationError);
  });

  it('moves a record to the back of the queue when it is updated', async () => {
    const table = await db.createTable();
    const { store: fresh, clock: freshClock } = makeStore(db.client, table);
    freshClock.now = T0;
    const a = (await fresh.records.create(newRecord({ createdAt: T0 }))).record;
    const b = (await fresh.records.create(newRecord({ createdAt: T0 }))).record;
    freshClock.now = T0 + 10;
    await fresh.records.transition(a.handle, event('PENDING', 0, T0 + 5));
    expect((await fresh.queries.listActive('aws_batch')).records.map((r) => r.handle)).toEqual([
      b.handle,
      a.handle,
    ]);
  });
});
