import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppStateTransition } from '../../../lib/specs/index.js';
import { DynamoAppRecordStore } from '../../../lib/store/index.js';
import { type Dynalite, dynaliteClient, startDynalite } from '../../helpers/dynalite.js';
import { newRecord, T0 } from './fixtures.js';

let db: Dynalite;
let store: DynamoAppRecordStore;
const calls: string[] = [];

beforeAll(async () => {
  db = await startDynalite();
  const client = dynaliteClient(db.endpoint);
  client.middlewareStack.add(
    (next, context) => async (args) => {
      calls.push(String(context.commandName));
      return next(args);
    },
    { step: 'initialize', name: 'countCalls' },
  );
  store = new DynamoAppRecordStore({ tableName: db.tableName, client });
});
afterAll(() => db.close());

const running = (eventTime: number): AppStateTransition => ({
  state: 'RUNNING',
  attempt: 0,
  eventTime,
  source: 'event',
});

describe('DynamoAppRecordStore.transition with a current record', () => {
  it('starts from a record it just returned, saving one read', async () => {
    const input = newRecord();
    await store.records.create(input);
    const found = await store.queries.findByNativeName(input.scheduler, input.nativeName);
    calls.length = 0;
    const outcome = await store.records.transition(input.handle, running(T0 + 10), found);
    expect(outcome).toMatchObject({ applied: true, previous: 'SUBMITTED' });
    expect(calls).toEqual(['UpdateItemCommand']);
  });

  it('reads again when the record it was given is no longer current, and still decides right', async () => {
    const input = newRecord();
    await store.records.create(input);
    const stale = await store.records.get(input.handle);
    await store.records.transition(input.handle, running(T0 + 10));
    calls.length = 0;
    const outcome = await store.records.transition(
      input.handle,
      { state: 'SUCCEEDED', attempt: 1, eventTime: T0 + 20, source: 'event' },
      stale,
    );
    expect(outcome).toMatchObject({ applied: true, previous: 'RUNNING' });
    expect(calls).toEqual(['UpdateItemCommand', 'GetItemCommand', 'UpdateItemCommand']);
    expect((await store.records.get(input.handle))?.history.map((h) => h.to)).toEqual([
      'RUNNING',
      'SUCCEEDED',
    ]);
  });

  it('turns a duplicate away without writing', async () => {
    const input = newRecord();
    await store.records.create(input);
    await store.records.transition(input.handle, running(T0 + 10));
    const current = await store.records.get(input.handle);
    calls.length = 0;
    expect(await store.records.transition(input.handle, running(T0 + 10), current)).toMatchObject({
      applied: false,
      reason: 'duplicate',
    });
    expect(calls).toEqual([]);
  });
});
