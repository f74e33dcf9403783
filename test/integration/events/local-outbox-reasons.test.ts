/** withLocalOutbox and state reasons: the published AppState Change event carries the reason (dynalite). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withLocalOutbox } from '../../../lib/events/local-outbox.js';
import type { AppStateChangeEvent } from '../../../lib/runner/index.js';
import { makeAppDef, type StateReason } from '../../../lib/specs/index.js';
import { DynamoAppRecordStore } from '../../../lib/store/index.js';
import { type Dynalite, startDynalite } from '../../helpers/dynalite.js';

let db: Dynalite;
beforeAll(async () => {
  db = await startDynalite();
});
afterAll(() => db.close());

const T0 = 1_700_000_000_000;
const HANDLE = 'aws_batch://torchx/gpu:train-x1';
const BLOCKED: StateReason = {
  text: 'MISCONFIGURATION:JOB_RESOURCE_REQUIREMENT - All compute environments have no connected instances that meet the job requirements.',
  code: 'MISCONFIGURATION:JOB_RESOURCE_REQUIREMENT',
  since: new Date(T0 + 5_000).toISOString(),
  source: 'aws_batch',
};

describe('withLocalOutbox with state reasons', () => {
  it('publishes the reason with the state change, and a change of reason alone once', async () => {
    const tableName = await db.createTable();
    const store = new DynamoAppRecordStore({ tableName, client: db.client, now: () => T0 + 10_000 });
    await store.records.create({
      handle: HANDLE,
      scheduler: 'aws_batch',
      session: 'torchx',
      appId: 'gpu:train-x1',
      nativeName: 'train-x1',
      owner: 'alice',
      name: 'train',
      app: makeAppDef({ name: 'train' }),
      cfg: {},
      state: 'SUBMITTED',
      createdAt: T0,
    });
    const published: AppStateChangeEvent[] = [];
    const outbox = withLocalOutbox(store, { publisher: { publish: async (e) => void published.push(e) } });
    const pending = { state: 'PENDING' as const, attempt: 0, eventTime: T0, source: 'event' as const };
    await outbox.records.transition(HANDLE, pending);
    await outbox.records.transition(HANDLE, { ...pending, stateReason: BLOCKED });
    await outbox.records.transition(HANDLE, {
      ...pending,
      stateReason: { ...BLOCKED, since: new Date(T0 + 9_000).toISOString() },
    });
    await outbox.drain();
    expect(published.map((e) => [e.from, e.to, e.stateReason?.code])).toEqual([
      ['SUBMITTED', 'PENDING', undefined],
      ['PENDING', 'PENDING', 'MISCONFIGURATION:JOB_RESOURCE_REQUIREMENT'],
    ]);
    expect(published[1]?.stateReason?.since).toBe(BLOCKED.since);
  });
});
