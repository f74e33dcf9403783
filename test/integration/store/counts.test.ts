/**
 * DynamoAppRecordStore.countByState against dynalite: counts per state with a listing's filters, one owner's
 * records only (every owner's for ALL_OWNERS), a Query projecting the state (never a Scan), and a cap on the
 * records read that says when the counts are a lower bound.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_OWNERS, type AppCounts } from '../../../lib/runner/index.js';
import { type AppState, ValidationError } from '../../../lib/specs/index.js';
import type { DynamoAppRecordStore } from '../../../lib/store/index.js';
import { type Dynalite, sentCommands, startDynalite } from '../../helpers/dynalite.js';
import { ALICE, BOB, event, makeStore, newRecord, T0 } from './fixtures.js';

let db: Dynalite;
let store: DynamoAppRecordStore;

interface Seeded {
  owner: string;
  scheduler: string;
  session: string;
  state: AppState;
  createdAt: number;
}
const seeded: Seeded[] = [];
const STATES: AppState[] = ['SUBMITTED', 'PENDING', 'RUNNING', 'SUCCEEDED', 'FAILED'];

beforeAll(async () => {
  db = await startDynalite();
  ({ store } = makeStore(db.client, db.tableName));
  // 40 records of ALICE over two schedulers and sessions, in five states; 7 of BOB, all RUNNING.
  const specs: Seeded[] = [
    ...Array.from({ length: 40 }, (_, i) => ({
      owner: ALICE,
      scheduler: i % 2 === 0 ? 'aws_batch' : 'aws_sagemaker',
      session: i % 4 < 2 ? 'torchx' : 'nightly',
      state: STATES[i % STATES.length] ?? 'SUBMITTED',
      createdAt: T0 + i * 1000,
    })),
    ...Array.from({ length: 7 }, (_, i) => ({
      owner: BOB,
      scheduler: 'aws_batch',
      session: 'torchx',
      state: 'RUNNING' as AppState,
      createdAt: T0 + 500 + i * 1000,
    })),
  ];
  for (const spec of specs) {
    const input = newRecord({
      owner: spec.owner,
      scheduler: spec.scheduler,
      session: spec.session,
      createdAt: spec.createdAt,
    });
    await store.records.create(input);
    if (spec.state !== 'SUBMITTED') {
      await store.records.transition(
        input.handle,
        event(spec.state, 0, spec.createdAt + 1, { reason: 'seeded' }),
      );
    }
    seeded.push(spec);
  }
});
afterAll(() => db.close());

/** The counts a correct implementation gives for the seeded records that match. */
function expected(match: (s: Seeded) => boolean): AppCounts {
  const counts: Partial<Record<AppState, number>> = {};
  const matching = seeded.filter(match);
  for (const s of matching) counts[s.state] = (counts[s.state] ?? 0) + 1;
  return { counts, counted: matching.length, complete: true };
}

describe('DynamoAppRecordStore.countByState', () => {
  it('counts every record of the owner per state', async () => {
    const counts = await store.queries.countByState({ owner: ALICE });
    expect(counts).toEqual(expected((s) => s.owner === ALICE));
    expect(counts.counts).toEqual({ SUBMITTED: 8, PENDING: 8, RUNNING: 8, SUCCEEDED: 8, FAILED: 8 });
  });

  it("never counts another owner's records", async () => {
    expect(await store.queries.countByState({ owner: BOB })).toEqual({
      counts: { RUNNING: 7 },
      counted: 7,
      complete: true,
    });
    expect(await store.queries.countByState({ owner: 'arn:aws:iam::123456789012:user/nobody' })).toEqual({
      counts: {},
      counted: 0,
      complete: true,
    });
  });

  it('applies the scheduler, session and since filters as a listing does', async () => {
    expect(await store.queries.countByState({ owner: ALICE, scheduler: 'aws_sagemaker' })).toEqual(
      expected((s) => s.owner === ALICE && s.scheduler === 'aws_sagemaker'),
    );
    expect(await store.queries.countByState({ owner: ALICE, session: 'nightly' })).toEqual(
      expected((s) => s.owner === ALICE && s.session === 'nightly'),
    );
    const since = T0 + 25_000;
    expect(
      await store.queries.countByState({ owner: ALICE, scheduler: 'aws_batch', session: 'torchx', since }),
    ).toEqual(
      expected(
        (s) =>
          s.owner === ALICE && s.scheduler === 'aws_batch' && s.session === 'torchx' && s.createdAt >= since,
      ),
    );
  });

  it("counts every owner's records for ALL_OWNERS", async () => {
    expect(await store.queries.countByState({ owner: ALL_OWNERS })).toEqual(expected(() => true));
    expect(await store.queries.countByState({ owner: ALL_OWNERS, scheduler: 'aws_batch' })).toEqual(
      expected((s) => s.scheduler === 'aws_batch'),
    );
  });

  it('stops at the cap and says the counts are incomplete', async () => {
    const capped = await store.queries.countByState({ owner: ALICE }, 12);
    expect(capped.complete).toBe(false);
    expect(capped.counted).toBe(12);
    // Newest first: the 12 newest records, in the states they were seeded with.
    expect(capped).toEqual({
      ...expected((s) => s.owner === ALICE && s.createdAt >= T0 + 28_000),
      complete: false,
    });
  });

  it('is complete when the cap reads exactly every record, and a cap counts records read, not matched', async () => {
    expect(await store.queries.countByState({ owner: BOB }, 7)).toEqual({
      counts: { RUNNING: 7 },
      counted: 7,
      complete: true,
    });
    const filtered = await store.queries.countByState({ owner: ALICE, scheduler: 'aws_sagemaker' }, 10);
    expect(filtered.complete).toBe(false);
    expect(filtered.counted).toBe(5);
  });

  it('reads the owner index with one paged Query projecting only the state, never a Scan', async () => {
    const sent = await sentCommands(db.client, async () => {
      await store.queries.countByState({ owner: ALICE });
      await store.queries.countByState({ owner: ALL_OWNERS });
    });
    expect(sent.map((call) => call.operation)).not.toContain('Scan');
    const queries = sent.filter((call) => call.operation === 'Query').map((call) => call.input);
    // Each a single page here (a few KB of records); dynalite pages at 1 MB, as DynamoDB does.
    expect(queries.map((input) => input.IndexName)).toEqual(['byOwner', 'byCreated']);
    for (const input of queries) {
      expect(input.ProjectionExpression).toBe('#state');
      expect(input.ExpressionAttributeNames).toMatchObject({ '#state': 'state' });
    }
  });

  it('refuses a cap that is not a positive integer, naming it', async () => {
    await expect(store.queries.countByState({ owner: ALICE }, 0)).rejects.toThrow(ValidationError);
    await expect(store.queries.countByState({ owner: ALICE }, 0)).rejects.toThrow(/cap/);
    await expect(store.queries.countByState({ owner: '' })).rejects.toThrow(/owner/);
  });
});
