/**
 * Runner › records stay under DynamoDB's 400 KB item limit: a 700-replica app whose replica writes a 500 KB
 * torchelastic error file, and a 500 KB failure reason, over the real store (dynalite). The app reaches its
 * terminal state; status, refresh and cancel keep working.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Runner } from '../../../lib/runner/index.js';
import { SchedulerRegistry } from '../../../lib/schedulers/index.js';
import {
  type AppState,
  makeAppDef,
  makeResource,
  makeRole,
  type RoleStatus,
} from '../../../lib/specs/index.js';
import {
  DynamoAppRecordStore,
  ELIDED,
  itemSize,
  MAX_ITEM_BYTES,
  MAX_REASON_BYTES,
} from '../../../lib/store/index.js';
import { APP_SORT_KEY, appPartitionKey } from '../../../lib/store/keys.js';
import { type Dynalite, startDynalite } from '../../helpers/dynalite.js';
import { FakeScheduler } from '../../helpers/fake-scheduler.js';

let db: Dynalite;
beforeAll(async () => {
  db = await startDynalite();
});
afterAll(() => db.close());

const OWNER = 'alice';
const REPLICAS = 700;
const KB = 1024;

/** A torchelastic error file of about `bytes` bytes. */
function errorFile(bytes: number): string {
  const trace = 'Traceback (most recent call last):\n  File "train.py", line 1, in <module>\n'.repeat(
    Math.ceil(bytes / 70),
  );
  return JSON.stringify({
    message: {
      message: 'RuntimeError: CUDA error: an illegal memory access',
      extraInfo: { py_callstack: trace },
    },
  });
}

function replicas(state: AppState, bigErrorOn?: number): RoleStatus[] {
  return [
    {
      role: 'trainer',
      replicas: Array.from({ length: REPLICAS }, (_, id) => ({
        id,
        state,
        role: 'trainer',
        hostname: `ip-10-0-${Math.floor(id / 250)}-${id % 250}.ec2.internal`,
        structuredErrorMsg: id === bigErrorOn ? errorFile(500 * KB) : '<NONE>',
        reason: `replica ${id} of ${REPLICAS}: ${'x'.repeat(120)}`,
      })),
    },
  ];
}

async function harness() {
  const tableName = await db.createTable();
  let fake: FakeScheduler | undefined;
  const registry = new SchedulerRegistry(
    {
      fake: (ctx) => {
        fake = new FakeScheduler(ctx);
        return fake;
      },
    },
    { sessionName: 'torchx' },
  );
  const store = new DynamoAppRecordStore({ tableName, client: db.client });
  const runner = new Runner({ schedulers: registry, store });
  registry.get('fake');
  const app = makeAppDef({
    name: 'big',
    roles: [
      makeRole({
        name: 'trainer',
        image: 'img',
        entrypoint: 'torchrun',
        args: ['train.py'],
        numReplicas: REPLICAS,
        resource: makeResource({ cpu: 1, gpu: 0, memMB: 512 }),
      }),
    ],
  });
  const { handle, record } = await runner.run(app, 'fake', { queue: 'q' }, { owner: OWNER });
  const itemBytes = async () => {
    const { Item } = await db.itemClient.get({
      TableName: tableName,
      Key: { pk: appPartitionKey(handle), sk: APP_SORT_KEY },
    });
    return itemSize(Item ?? {});
  };
  return { runner, fake: fake as FakeScheduler, handle, appId: record.appId, itemBytes };
}

describe('Runner › bounded records at 700 replicas', () => {
  it('keeps refreshing a RUNNING app with a 500 KB error file on a replica, then reaches FAILED with a 500 KB reason', async () => {
    const h = await harness();
    const job = h.fake.jobs.get(h.appId);
    if (!job) throw new Error('no job');
    job.state = 'RUNNING';
    job.roles = replicas('RUNNING', 3);
    job.updatedAt += 1;

    const running = await h.runner.refresh(h.handle, OWNER);
    expect(running.state).toBe('RUNNING');
    expect(running.roles[0]?.replicas).toHaveLength(REPLICAS);
    const bounded = running.roles[0]?.replicas[3]?.structuredErrorMsg ?? '';
    expect(JSON.parse(bounded)).toMatchObject({ truncated: true, bytes: expect.any(Number) });
    expect(await h.itemBytes()).toBeLessThanOrEqual(MAX_ITEM_BYTES);
    expect((await h.runner.status(h.handle, { owner: OWNER })).state).toBe('RUNNING');

    job.state = 'FAILED';
    job.roles = replicas('FAILED', 3);
    job.msg = `torchelastic: ${errorFile(500 * KB)}`;
    job.updatedAt += 1;
    const failed = await h.runner.refresh(h.handle, OWNER);
    expect(failed.state).toBe('FAILED');
    expect(Buffer.byteLength(failed.reason ?? '')).toBeLessThanOrEqual(MAX_REASON_BYTES);
    expect(failed.reason).toMatch(/… \[truncated: \d+ bytes\]$/);
    expect(failed.history.at(-1)?.to).toBe('FAILED');
    expect(await h.itemBytes()).toBeLessThanOrEqual(MAX_ITEM_BYTES);
    expect((await h.runner.status(h.handle, { owner: OWNER, refresh: true })).state).toBe('FAILED');
  });

  it('drops the error text of all but the first replicas when every replica wrote a large error file', async () => {
    const h = await harness();
    const job = h.fake.jobs.get(h.appId);
    if (!job) throw new Error('no job');
    job.state = 'FAILED';
    job.roles = replicas('FAILED');
    for (const replica of job.roles[0]?.replicas ?? []) replica.structuredErrorMsg = errorFile(4 * KB);
    job.updatedAt += 1;
    const failed = await h.runner.refresh(h.handle, OWNER);
    expect(failed.state).toBe('FAILED');
    const texts = failed.roles[0]?.replicas.map((r) => r.structuredErrorMsg) ?? [];
    expect(texts.filter((t) => t === ELIDED).length).toBeGreaterThan(0);
    expect(JSON.parse(texts[0] ?? '')).toMatchObject({ truncated: true });
    expect(failed.roles[0]?.replicas.map((r) => r.state)).toEqual(Array(REPLICAS).fill('FAILED'));
    expect(await h.itemBytes()).toBeLessThanOrEqual(MAX_ITEM_BYTES);
  });

  it('cancels such an app: the cancel reaches the scheduler and the record becomes CANCELLED', async () => {
    const h = await harness();
    const job = h.fake.jobs.get(h.appId);
    if (!job) throw new Error('no job');
    job.state = 'RUNNING';
    job.roles = replicas('RUNNING', 0);
    job.updatedAt += 1;
    await h.runner.refresh(h.handle, OWNER);
    await h.runner.cancel(h.handle, OWNER);
    expect(h.fake.calls).toContain('cancel');
    job.roles = replicas('CANCELLED', 0);
    const cancelled = await h.runner.refresh(h.handle, OWNER);
    expect(cancelled.state).toBe('CANCELLED');
    expect(cancelled.cancelRequestedAt).toBeDefined();
  });
});
