/**
 * withLocalOutbox: local mode publishes each committed state change after its write, retrying, and never
 * fails the request that made the change (real store over dynalite).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withLocalOutbox } from '../../../lib/events/local-outbox.js';
import type { AppStateChangeEvent } from '../../../lib/runner/index.js';
import { makeAppDef } from '../../../lib/specs/index.js';
import { DynamoAppRecordStore } from '../../../lib/store/index.js';
import { type Dynalite, startDynalite } from '../../helpers/dynalite.js';

let db: Dynalite;
beforeAll(async () => {
  db = await startDynalite();
});
afterAll(() => db.close());

const T0 = 1_700_000_000_000;
const HANDLE = 'local_cwd://torchx/echo-x1';

async function storeWithRecord() {
  const tableName = await db.createTable();
  const store = new DynamoAppRecordStore({ tableName, client: db.client, now: () => T0 });
  await store.records.create({
    handle: HANDLE,
    scheduler: 'local_cwd',
    session: 'torchx',
    appId: 'echo-x1',
    nativeName: 'echo-x1',
    owner: 'alice',
    name: 'echo',
    app: makeAppDef({ name: 'echo' }),
    cfg: {},
    state: 'SUBMITTED',
    createdAt: T0,
  });
  return store;
}

const at = (state: 'RUNNING' | 'SUCCEEDED', t: number) => ({
  state,
  attempt: 0,
  eventTime: T0 + t,
  source: 'local' as const,
});

describe('withLocalOutbox', () => {
  it('publishes each committed state change in order, after retrying a failing publisher', async () => {
    const published: AppStateChangeEvent[] = [];
    let failures = 2;
    const slept: number[] = [];
    const outbox = withLocalOutbox(await storeWithRecord(), {
      publisher: {
        publish: async (event) => {
          if (failures-- > 0) throw new Error('bus down');
          published.push(event);
        },
      },
      sleep: async (ms) => void slept.push(ms),
    });
    expect(await outbox.records.transition(HANDLE, at('RUNNING', 1))).toMatchObject({ applied: true });
    expect(await outbox.records.transition(HANDLE, at('RUNNING', 1))).toMatchObject({ applied: false });
    expect(await outbox.records.transition(HANDLE, at('SUCCEEDED', 2))).toMatchObject({ applied: true });
    await outbox.drain();
    expect(published.map((e) => [e.id, e.from, e.to, e.source])).toEqual([
      [`${HANDLE}#2`, 'SUBMITTED', 'RUNNING', 'local'],
      [`${HANDLE}#3`, 'RUNNING', 'SUCCEEDED', 'local'],
    ]);
    // Two waits, each a full-jitter draw below the doubling bound (PUBLISH_BACKOFF: 100 ms, then 200 ms).
    expect(slept).toHaveLength(2);
    expect(slept[0]).toBeGreaterThanOrEqual(0);
    expect(slept[0]).toBeLessThan(100);
    expect(slept[1]).toBeGreaterThanOrEqual(0);
    expect(slept[1]).toBeLessThan(200);
    expect((await outbox.records.get(HANDLE))?.state).toBe('SUCCEEDED');
  });

  it('gives an event up after its attempts without failing the transition, and reports it', async () => {
    const givenUp: unknown[] = [];
    const outbox = withLocalOutbox(await storeWithRecord(), {
      publisher: {
        publish: async () => {
          throw new Error('bus down');
        },
      },
      attempts: 3,
      sleep: async () => {},
      onGiveUp: (error) => void givenUp.push(error),
    });
    expect(await outbox.records.transition(HANDLE, at('RUNNING', 1))).toMatchObject({ applied: true });
    await outbox.drain();
    expect(givenUp).toHaveLength(1);
    expect((await outbox.records.get(HANDLE))?.state).toBe('RUNNING');
  });
});
