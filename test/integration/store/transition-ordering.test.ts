import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  APP_STATES,
  type AppRecord,
  type AppState,
  type AppStateTransition,
  decideTransition,
  makeAppDef,
  stateRank,
} from '../../../lib/specs/index.js';
import { type DynamoAppRecordStore, forwardTransitionCondition } from '../../../lib/store/index.js';
import { appPartitionKey } from '../../../lib/store/keys.js';
import { type Dynalite, startDynalite } from '../../helpers/dynalite.js';
import {
  BATCH_LIFECYCLE_WITH_RETRY,
  event,
  makeStore,
  newRecord,
  seededRandom,
  shuffled,
  T0,
} from './fixtures.js';

let db: Dynalite;
let store: DynamoAppRecordStore;

beforeAll(async () => {
  db = await startDynalite();
  ({ store } = makeStore(db.client, db.tableName));
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

/** A record with a minimal app, so these many-request tests move small items. */
async function created(): Promise<AppRecord> {
  return (await store.records.create(newRecord({ app: makeAppDef({ name: 'trainer' }), cfg: {} }))).record;
}

/** Generous limit for the tests that send thousands of requests, so a busy machine does not fail them. */
const MANY_REQUESTS_TIMEOUT_MS = 120_000;

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

describe('DynamoAppRecordStore.transition under disorder', () => {
  it(
    'ends SUCCEEDED with no backward move for 200 shuffled deliveries with duplicates',
    async () => {
      const random = seededRandom(20_261_122);
      const runs = Array.from({ length: 200 }, () => {
        const duplicates = BATCH_LIFECYCLE_WITH_RETRY.filter(() => random() < 0.3);
        return shuffled([...BATCH_LIFECYCLE_WITH_RETRY, ...duplicates], random);
      });
      await Promise.all(
        runs.map(async (deliveries) => {
          const record = await created();
          for (const t of deliveries) await store.records.transition(record.handle, t);
          const final = await store.records.get(record.handle);
          expect(final).toMatchObject({ state: 'SUCCEEDED', attempt: 2, lastEventTime: T0 + 7000 });
          expectForwardHistory(final!, 'SUBMITTED');
          expect(final?.history.at(-1)?.to).toBe('SUCCEEDED');
        }),
      );
    },
    MANY_REQUESTS_TIMEOUT_MS,
  );

  it(
    'decides concurrent deliveries as some serial order would, losing no update',
    async () => {
      const random = seededRandom(7);
      await Promise.all(
        Array.from({ length: 10 }, async () => {
          const record = await created();
          const deliveries = shuffled([...BATCH_LIFECYCLE_WITH_RETRY, ...BATCH_LIFECYCLE_WITH_RETRY], random);
          const outcomes = await Promise.all(
            deliveries.map((t) => store.records.transition(record.handle, t)),
          );
          const final = await store.records.get(record.handle);
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
          // Ordered by event time (the order the writes must have happened in), each applied transition
          // moved forward from the one before it and saw it as its previous state.
          const sequence = applied
            .flatMap((o) => (o.applied ? [o] : []))
            .sort((a, b) => a.record.lastEventTime - b.record.lastEventTime);
          sequence.forEach((outcome, i) => {
            const before = sequence[i - 1]?.record;
            expect(outcome.previous).toBe(before?.state ?? 'SUBMITTED');
            if (before) {
              const { state, attempt, lastEventTime: eventTime } = outcome.record;
              expect(decideTransition(before, { state, attempt, eventTime, source: 'event' })).toBe('apply');
            }
          });
          expect(final?.history.map((h) => h.to)).toEqual(
            sequence
              .filter((o, i) => o.record.state !== (sequence[i - 1]?.record.state ?? 'SUBMITTED'))
              .map((o) => o.record.state),
          );
        }),
      );
    },
    MANY_REQUESTS_TIMEOUT_MS,
  );

  it('applies only the later of two racing transitions when they arrive out of order', async () => {
    for (let i = 0; i < 25; i++) {
      const record = await created();
      await Promise.all([
        store.records.transition(record.handle, event('PENDING', 0, T0 + 1000)),
        store.records.transition(record.handle, event('RUNNING', 0, T0 + 3000)),
      ]);
      expect((await store.records.get(record.handle))?.state).toBe('RUNNING');
    }
  });
});

describe('forwardTransitionCondition', () => {
  it(
    'accepts exactly the transitions decideTransition applies, evaluated by DynamoDB',
    async () => {
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
          db.itemClient.put({
            TableName: db.tableName,
            Item: { pk: `GRID#${i}`, sk: 'A', stateRank: stateRank(p.state), ...p },
          }),
        ),
      );
      const mismatches: string[] = [];
      await Promise.all(
        currents.map(async (current, i) => {
          for (const t of nexts) {
            const condition = forwardTransitionCondition(t);
            const accepted = await db.itemClient
              .update({
                TableName: db.tableName,
                Key: { pk: `GRID#${i}`, sk: 'A' },
                UpdateExpression: 'SET #probe = :probe',
                ConditionExpression: condition.expression,
                ExpressionAttributeNames: { ...condition.names, '#probe': 'probe' },
                ExpressionAttributeValues: { ...condition.values, ':probe': 1 },
              })
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
    },
    MANY_REQUESTS_TIMEOUT_MS,
  );

  it('rejects any transition of a missing item', async () => {
    const condition = forwardTransitionCondition({ state: 'RUNNING', attempt: 5, eventTime: T0 });
    await expect(
      db.itemClient.update({
        TableName: db.tableName,
        Key: { pk: 'GRID#missing', sk: 'A' },
        UpdateExpression: 'SET #probe = :probe',
        ConditionExpression: condition.expression,
        ExpressionAttributeNames: { ...condition.names, '#probe': 'probe' },
        ExpressionAttributeValues: { ...condition.values, ':probe': 1 },
      }),
    ).rejects.toMatchObject({ name: 'ConditionalCheckFailedException' });
  });
});
