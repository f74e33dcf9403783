/**
 * Runner › applyNativeTransition for events that name the app id (Batch, SageMaker): the record is read by
 * key, so an accepted event costs one consistent read and one conditional write, a duplicate one read and
 * no write, and the name index is asked only when no record has that key. Real store (dynalite); DynamoDB
 * calls counted by SDK middleware.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Runner } from '../../../lib/runner/index.js';
import { SchedulerRegistry } from '../../../lib/schedulers/index.js';
import { makeAppDef } from '../../../lib/specs/index.js';
import { DynamoAppRecordStore } from '../../../lib/store/index.js';
import { type Dynalite, dynaliteClient, startDynalite } from '../../helpers/dynalite.js';

let db: Dynalite;
beforeAll(async () => {
  db = await startDynalite();
});
afterAll(() => db.close());

const T0 = 1_700_000_000_000;
const event = (state: 'RUNNING' | 'SUCCEEDED', eventTime: number) => ({
  state,
  attempt: 0,
  eventTime,
  source: 'event' as const,
});

async function setup() {
  const client = dynaliteClient(db.endpoint);
  const calls = new Map<string, number>();
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const name = context.commandName ?? 'unknown';
      calls.set(name, (calls.get(name) ?? 0) + 1);
      return next(args);
    },
    { step: 'initialize', name: 'ingestionCallCounter' },
  );
  const tableName = await db.createTable();
  const store = new DynamoAppRecordStore({ tableName, client, now: () => T0 });
  await store.records.create({
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
  const slept: number[] = [];
  const runner = new Runner({
    schedulers: new SchedulerRegistry({}, { sessionName: 'torchx' }),
    store,
    now: () => T0,
    sleep: async (ms) => void slept.push(ms),
    lateIndexDelaysMs: [100, 300],
  });
  const take = () => {
    const out = Object.fromEntries(calls);
    calls.clear();
    return out;
  };
  take();
  return { runner, store, take, slept };
}

describe('Runner › applyNativeTransition by app id', () => {
  it('applies an accepted event with one consistent read and one conditional write, no index query', async () => {
    const h = await setup();
    const outcome = await h.runner.applyNativeTransition('aws_batch', 'job-1', event('RUNNING', T0 + 10), {
      appId: 'q:job-1',
    });
    expect(outcome).toMatchObject({ applied: true, previous: 'SUBMITTED' });
    expect(h.take()).toEqual({ GetItemCommand: 1, UpdateItemCommand: 1 });
    expect((await h.store.records.get('aws_batch://torchx/q:job-1'))?.state).toBe('RUNNING');
  });

  it('turns a duplicate away with one read and no write', async () => {
    const h = await setup();
    await h.runner.applyNativeTransition('aws_batch', 'job-1', event('RUNNING', T0 + 10), {
      appId: 'q:job-1',
    });
    h.take();
    const outcome = await h.runner.applyNativeTransition('aws_batch', 'job-1', event('RUNNING', T0 + 10), {
      appId: 'q:job-1',
    });
    expect(outcome).toMatchObject({ applied: false });
    expect(h.take()).toEqual({ GetItemCommand: 1 });
  });

  it('falls back to the name index when no record has that app id', async () => {
    const h = await setup();
    // A record whose app id the event does not reproduce (e.g. submitted under another queue name).
    const outcome = await h.runner.applyNativeTransition('aws_batch', 'job-1', event('RUNNING', T0 + 10), {
      appId: 'other-queue:job-1',
    });
    expect(outcome).toMatchObject({ applied: true, record: { handle: 'aws_batch://torchx/q:job-1' } });
    expect(h.take()).toEqual({ GetItemCommand: 2, QueryCommand: 1, UpdateItemCommand: 1 });
  });

  it('ignores an event no record has, by key or by name, after the late-index retries', async () => {
    const h = await setup();
    const outcome = await h.runner.applyNativeTransition('aws_batch', 'job-2', event('RUNNING', T0 + 10), {
      appId: 'q:job-2',
    });
    expect(outcome).toBeUndefined();
    expect(h.slept).toEqual([100, 300]);
    expect(h.take()).toEqual({ GetItemCommand: 1, QueryCommand: 3 });
  });
});
