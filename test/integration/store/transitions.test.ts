import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  APP_STATES,
  type AppRecord,
  type AppState,
  type AppStateTransition,
  decideTransition,
  MAX_HISTORY,
  stateRank,
  ValidationError,
} from '../../../lib/specs/index.js';
import { type DynamoAppRecordStore, forwardTransitionCondition } from '../../../lib/store/index.js';
import { type Dynalite, startDynalite } from '../../helpers/dynalite.js';
import { event, makeStore, newRecord, seededRandom, shuffled, T0 } from './fixtures.js';

let db: Dynalite;
let store: DynamoAppRecordStore;
let clock: { now: number };

beforeAll(async () => {
  db = await startDynalite();
  ({ store, clock } = makeStore(db.documentClient, db.tableName, { retentionDays: 7 }));
});
afterAll(() => db.close());

async function rawItem(handle: string): Promise<Record<string, unknown> | undefined> {
  const { Item } = await db.documentClient.send(
    new GetCommand({ TableName: db.tableName, Key: { pk: `APP#${handle}`, sk: 'A' }, ConsistentRead: true }),
  );
  return Item;
}

async function created(overrides: Parameters<typeof newRecord>[0] = {}): Promise<AppRecord> {
  return (await store.create(newRecord(overrides))).record;
}

/**
 * An AWS Batch job that fails once and succeeds on its retry, as Batch reports it (RUNNABLE and STARTING map
 * to PENDING; `attempt` is the number of finished attempts).
 */
const BATCH_LIFECYCLE_WITH_RETRY: readonly AppStateTransition[] = [
  event('PENDING', 0, T0 + 1000, { reason: 'RUNNABLE' }),
  event('PENDING', 0, T0 + 2000, { reason: 'STARTING' }),
  event('RUNNING', 0, T0 + 3000),
  event('PENDING', 1, T0 + 4000, { reason: 'RUNNABLE after attempt 1 failed' }),
  event('PENDING', 1, T0 + 5000, { reason: 'STARTING' }),
  event('RUNNING', 1, T0 + 6000),
  event('SUCCEEDED', 2, T0 + 7000, { reason: 'Essential container in task exited' }),
];

/** No backward move: every accepted change is later than the one before and links to it. */
function expectForwardHistory(record: AppRecord, initial: AppState): void {
  let previous: { to: AppState; time: number } = { to: initial, time: -1 };
  for (const entry of record.history) {
    expect(entry.from).toBe(previous.to);
    expect(entry.time).toBeGreaterThan(previous.time);
    expect(BATCH_LIFECYCLE_WITH_RETRY.some((t) => t.state === entry.to && t.eventTime === entry.time)).toBe(
      true,
    );
    previous = entry;
  }
}

describe('DynamoAppRecordStore.transition', () => {
  it('applies a Batch lifecycle delivered in order, retry included', async () => {
    const record = await created();
    const outcomes = [];
    for (const t of BATCH_LIFECYCLE_WITH_RETRY) outcomes.push(await store.transition(record.handle, t));
    expect(outcomes.every((o) => o.applied)).toBe(true);
    const final = await store.get(record.handle);
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

  it('reports applied transitions with the previous state and the new record', async () => {
    const record = await created();
    clock.now = T0 + 99_000;
    const outcome = await store.transition(record.handle, event('RUNNING', 0, T0 + 3000));
    expect(outcome).toEqual({
      applied: true,
      previous: 'SUBMITTED',
      record: expect.objectContaining({ state: 'RUNNING', updatedAt: T0 + 99_000 }),
    });
    if (outcome.applied) expect(await store.get(record.handle)).toEqual(outcome.record);
  });

  it('treats the same event delivered twice as a duplicate no-op', async () => {
    const record = await created();
    await store.transition(record.handle, event('RUNNING', 0, T0 + 3000));
    const before = await rawItem(record.handle);
    const outcome = await store.transition(record.handle, event('RUNNING', 0, T0 + 3000));
    expect(outcome).toMatchObject({ applied: false, reason: 'duplicate', record: { state: 'RUNNING' } });
    expect(await rawItem(record.handle)).toEqual(before);
  });

  it('ignores a late event for an earlier state as stale', async () => {
    const record = await created();
    await store.transition(record.handle, event('RUNNING', 0, T0 + 3000));
    expect(await store.transition(record.handle, event('PENDING', 0, T0 + 1000))).toMatchObject({
      applied: false,
      reason: 'stale',
    });
    expect(await store.transition(record.handle, event('PENDING', 0, T0 + 9000))).toMatchObject({
      applied: false,
      reason: 'stale',
    });
    expect((await store.get(record.handle))?.state).toBe('RUNNING');
  });

  it('moves a retried Batch job from RUNNING back to PENDING because the attempt grew', async () => {
    const record = await created();
    await store.transition(record.handle, event('RUNNING', 0, T0 + 3000));
    const outcome = await store.transition(record.handle, event('PENDING', 1, T0 + 4000));
    expect(outcome).toMatchObject({
      applied: true,
      previous: 'RUNNING',
      record: { state: 'PENDING', attempt: 1 },
    });
  });

  it('never leaves a terminal state', async () => {
    const record = await created();
    await store.transition(record.handle, event('FAILED', 1, T0 + 5000, { reason: 'exit 1' }));
    for (const t of [
      event('SUCCEEDED', 1, T0 + 6000),
      event('RUNNING', 5, T0 + 9000),
      event('CANCELLED', 9, T0 + 9999),
      event('FAILED', 1, T0 + 5000),
    ]) {
      expect(await store.transition(record.handle, t)).toMatchObject({ applied: false, reason: 'terminal' });
    }
    expect(await store.get(record.handle)).toMatchObject({ state: 'FAILED', reason: 'exit 1', attempt: 1 });
  });

  it('reports a missing record', async () => {
    expect(await store.transition('aws_batch://torchx/q:ghost', event('RUNNING', 0, T0))).toEqual({
      applied: false,
      reason: 'missing',
    });
  });

  it('refreshes details on a later event in the same state without adding history', async () => {
    const record = await created();
    await store.transition(record.handle, event('RUNNING', 0, T0 + 3000));
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
    const outcome = await store.transition(
      record.handle,
      event('RUNNING', 0, T0 + 3500, { roles, numRestarts: 1, uiUrl: 'https://console/job' }),
    );
    expect(outcome.applied).toBe(true);
    const stored = await store.get(record.handle);
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
    await store.transition(record.handle, event('RUNNING', 0, T0 + 3000));
    expect(await rawItem(record.handle)).toMatchObject({ activeKey: 'aws_batch', updatedAt: T0 + 10_000 });
    expect((await rawItem(record.handle))?.expiresAt).toBeUndefined();
    clock.now = T0 + 20_000;
    await store.transition(record.handle, event('SUCCEEDED', 1, T0 + 7000));
    const item = await rawItem(record.handle);
    expect(item?.activeKey).toBeUndefined();
    expect(item?.expiresAt).toBe(Math.floor((T0 + 20_000) / 1000) + 7 * 86_400);
    expect(item).toMatchObject({ stateRank: stateRank('SUCCEEDED'), attempt: 1, version: 3 });
  });

  it(`keeps at most MAX_HISTORY (${MAX_HISTORY}) history entries, newest last`, async () => {
    const record = await created();
    let time = T0;
    for (let attempt = 0; attempt < 30; attempt++) {
      await store.transition(record.handle, event('PENDING', attempt, time + 10));
      await store.transition(record.handle, event('RUNNING', attempt, time + 20));
      time += 20;
    }
    const stored = await store.get(record.handle);
    expect(stored?.history).toHaveLength(MAX_HISTORY);
    expect(stored?.history.at(-1)).toMatchObject({ from: 'PENDING', to: 'RUNNING', time });
    expect(stored?.history[0]?.time).toBe(time - 10 * (MAX_HISTORY - 1));
  });

  it.each([
    ['eventTime', event('RUNNING', 0, Number.NaN)],
    ['attempt', event('RUNNING', -1, T0)],
    ['attempt', event('RUNNING', 0.5, T0)],
    ['state', event('BOGUS' as AppState, 0, T0)],
  ])('rejects a transition with a bad %s', async (field, t) => {
    const record = await created();
    const error = await store.transition(record.handle, t).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).issues[0]?.path).toBe(`transition.${field}`);
  });
});

describe('DynamoAppRecordStore.transition under disorder', () => {
  it('ends SUCCEEDED with no backward move for 200 shuffled deliveries with duplicates', async () => {
    const random = seededRandom(20_261_122);
    const runs = Array.from({ length: 200 }, () => {
      const duplicates = BATCH_LIFECYCLE_WITH_RETRY.filter(() => random() < 0.3);
      return shuffled([...BATCH_LIFECYCLE_WITH_RETRY, ...duplicates], random);
    });
    await Promise.all(
      runs.map(async (deliveries) => {
        const record = await created();
        for (const t of deliveries) await store.transition(record.handle, t);
        const final = await store.get(record.handle);
        expect(final).toMatchObject({ state: 'SUCCEEDED', attempt: 2, lastEventTime: T0 + 7000 });
        expectForwardHistory(final!, 'SUBMITTED');
        expect(final?.history.at(-1)?.to).toBe('SUCCEEDED');
      }),
    );
  });

  it('decides concurrent deliveries as some serial order would, losing no update', async () => {
    const random = seededRandom(7);
    await Promise.all(
      Array.from({ length: 10 }, async () => {
        const record = await created();
        const deliveries = shuffled([...BATCH_LIFECYCLE_WITH_RETRY, ...BATCH_LIFECYCLE_WITH_RETRY], random);
        const outcomes = await Promise.all(deliveries.map((t) => store.transition(record.handle, t)));
        const final = await store.get(record.handle);
        expect(final).toMatchObject({ state: 'SUCCEEDED', attempt: 2, lastEventTime: T0 + 7000 });
        expectForwardHistory(final!, 'SUBMITTED');
        const applied = outcomes.filter((o) => o.applied);
        // Every accepted transition is exactly one version step: none was overwritten by a racing writer.
        expect((await rawItem(record.handle))?.version).toBe(1 + applied.length);
        // Each event was accepted at most once, and duplicates of an accepted event were rejected.
        const appliedKeys = applied.map((o) =>
          o.applied ? `${o.record.attempt}/${o.record.lastEventTime}` : '',
        );
        expect(new Set(appliedKeys).size).toBe(appliedKeys.length);
        // Applied records, ordered by event time, only ever move forward.
        const positions = applied
          .map((o) => (o.applied ? o.record : undefined))
          .filter((r) => r !== undefined)
          .sort((a, b) => a.lastEventTime - b.lastEventTime);
        for (let i = 1; i < positions.length; i++) {
          const before = positions[i - 1]!;
          const after = positions[i]!;
          expect(
            decideTransition(before, {
              state: after.state,
              attempt: after.attempt,
              eventTime: after.lastEventTime,
              source: 'event',
            }),
          ).toBe('apply');
        }
      }),
    );
  });

  it('applies only the later of two racing transitions when they arrive out of order', async () => {
    for (let i = 0; i < 25; i++) {
      const record = await created();
      await Promise.all([
        store.transition(record.handle, event('PENDING', 0, T0 + 1000)),
        store.transition(record.handle, event('RUNNING', 0, T0 + 3000)),
      ]);
      expect((await store.get(record.handle))?.state).toBe('RUNNING');
    }
  });
});

describe('forwardTransitionCondition', () => {
  it('accepts exactly the transitions decideTransition applies, evaluated by DynamoDB', async () => {
    // Each state as the current position (attempt 1, event time 20) against every state as the next one, with
    // a lower, equal or higher attempt and an earlier, equal or later event time.
    const currents = APP_STATES.map((state) => ({ state, attempt: 1, lastEventTime: 20 }));
    const nexts: AppStateTransition[] = APP_STATES.flatMap((state) =>
      [
        [0, 30],
        [2, 10],
        [1, 10],
        [1, 20],
        [1, 30],
      ].map(([attempt = 0, eventTime = 0]) => ({ state, attempt, eventTime, source: 'event' as const })),
    );
    await Promise.all(
      currents.map((p, i) =>
        db.documentClient.send(
          new PutCommand({
            TableName: db.tableName,
            Item: { pk: `GRID#${i}`, sk: 'A', stateRank: stateRank(p.state), ...p },
          }),
        ),
      ),
    );
    const mismatches: string[] = [];
    await Promise.all(
      currents.map(async (current, i) => {
        for (const t of nexts) {
          const condition = forwardTransitionCondition(t);
          const accepted = await db.documentClient
            .send(
              new UpdateCommand({
                TableName: db.tableName,
                Key: { pk: `GRID#${i}`, sk: 'A' },
                UpdateExpression: 'SET #probe = :probe',
                ConditionExpression: condition.expression,
                ExpressionAttributeNames: { ...condition.names, '#probe': 'probe' },
                ExpressionAttributeValues: { ...condition.values, ':probe': 1 },
              }),
            )
            .then(
              () => true,
              (error: unknown) => {
                if ((error as Error).name === 'ConditionalCheckFailedException') return false;
                throw error;
              },
            );
          if (accepted !== (decideTransition(current, t) === 'apply')) {
            mismatches.push(`${JSON.stringify(current)} + ${JSON.stringify(t)}`);
          }
        }
      }),
    );
    expect(mismatches).toEqual([]);
    // The grid covers every decision.
    const decisions = new Set(currents.flatMap((c) => nexts.map((t) => decideTransition(c, t))));
    expect([...decisions].sort()).toEqual(['apply', 'duplicate', 'stale', 'terminal']);
  });

  it('rejects any transition of a missing item', async () => {
    const condition = forwardTransitionCondition({ state: 'RUNNING', attempt: 5, eventTime: T0 });
    await expect(
      db.documentClient.send(
        new UpdateCommand({
          TableName: db.tableName,
          Key: { pk: 'GRID#missing', sk: 'A' },
          UpdateExpression: 'SET #probe = :probe',
          ConditionExpression: condition.expression,
          ExpressionAttributeNames: { ...condition.names, '#probe': 'probe' },
          ExpressionAttributeValues: { ...condition.values, ':probe': 1 },
        }),
      ),
    ).rejects.toMatchObject({ name: 'ConditionalCheckFailedException' });
  });
});
