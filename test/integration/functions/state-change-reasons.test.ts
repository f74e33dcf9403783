/**
 * The state-change function and state reasons (dynalite): a RUNNABLE job that becomes blocked for lack of
 * capacity takes the reason without a state change, and a Batch Job Queue Blocked event gives the reason to
 * the apps waiting in that queue.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeAppDef, makeAppHandle } from '../../../lib/specs/index.js';
import { DynamoAppRecordStore } from '../../../lib/store/index.js';
import { type Dynalite, startDynalite } from '../../helpers/dynalite.js';

let db: Dynalite;
let store: DynamoAppRecordStore;
let handleStateChange: typeof import('../../../functions/events/state-change.js').handleStateChange;

beforeAll(async () => {
  db = await startDynalite();
  process.env.TXS_TABLE_NAME = db.tableName;
  process.env.TXS_DYNAMODB_ENDPOINT = db.endpoint;
  process.env.TXS_SCHEDULERS = 'aws_batch,aws_sagemaker';
  store = new DynamoAppRecordStore({ tableName: db.tableName, client: db.client });
  ({ handleStateChange } = await import('../../../functions/events/state-change.js'));
});
afterAll(() => db.close());

type Envelope = { source: string; 'detail-type': string; time: string; detail: Record<string, unknown> };

function batch(name: string, jobName: string): Envelope {
  const url = new URL(`../../fixtures/aws-batch/events/batch-${name}.json`, import.meta.url);
  const event = JSON.parse(readFileSync(url, 'utf8')) as Envelope;
  return { ...event, detail: { ...event.detail, jobName } };
}

async function record(queue: string, nativeName: string): Promise<string> {
  const appId = `${queue}:${nativeName}`;
  const handle = makeAppHandle('aws_batch', 'torchx', appId);
  await store.records.create({
    handle,
    scheduler: 'aws_batch',
    session: 'torchx',
    appId,
    nativeName,
    owner: 'alice',
    name: 'fixture',
    app: makeAppDef({ name: 'fixture' }),
    cfg: {},
    state: 'SUBMITTED',
    createdAt: 1_735_732_000_000,
  });
  return handle;
}

describe('handleStateChange with state reasons', () => {
  it('records a RUNNABLE job’s capacity reason after the plain RUNNABLE event, since the event’s time', async () => {
    const handle = await record('ml-gpu-queue', 'reason-job-1');
    expect(await handleStateChange(batch('single-runnable', 'reason-job-1'))).toMatchObject({
      applied: true,
    });
    expect(await handleStateChange(batch('single-runnable-capacity', 'reason-job-1'))).toMatchObject({
      applied: true,
      reason: 'PENDING -> PENDING',
    });
    // Delivered again (at least once): nothing new.
    expect(await handleStateChange(batch('single-runnable-capacity', 'reason-job-1'))).toMatchObject({
      applied: false,
    });
    const stored = await store.records.get(handle);
    expect(stored?.state).toBe('PENDING');
    expect(stored?.stateReason).toMatchObject({
      code: 'CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY',
      since: '2025-01-01T12:41:00.000Z',
    });
    // RUNNING brings no reason: the wait is over.
    await handleStateChange(batch('single-running', 'reason-job-1'));
    expect((await store.records.get(handle))?.stateReason).toBeUndefined();
  });

  it('gives a queue-blocked reason to the waiting apps of that queue', async () => {
    const head = await record('ml-gpu-queue', 'blocked-head');
    const behind = await record('ml-gpu-queue', 'blocked-behind');
    const other = await record('cpu-queue', 'blocked-other');
    for (const name of ['blocked-head', 'blocked-behind'])
      await handleStateChange(batch('single-runnable', name));
    await store.records.transition(other, {
      state: 'PENDING',
      eventTime: 1_735_732_800_000,
      attempt: 0,
      source: 'event',
    });

    await handleStateChange(batch('queue-blocked', 'blocked-head'));

    expect((await store.records.get(head))?.stateReason?.text).toMatch(
      /^CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY - /,
    );
    expect((await store.records.get(behind))?.stateReason?.text).toMatch(
      /^the queue is blocked by job blocked-head: CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY - /,
    );
    expect((await store.records.get(other))?.stateReason).toBeUndefined();
    // Batch's own events for the job behind say only RUNNABLE (redelivered): the queue's reason stays.
    await handleStateChange(batch('single-runnable', 'blocked-behind'));
    expect((await store.records.get(behind))?.stateReason?.text).toMatch(
      /^the queue is blocked by job blocked-head/,
    );
  });
});
