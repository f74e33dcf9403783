/**
 * The state-change function fed every EventBridge fixture (Batch and SageMaker) against the real store
 * (dynalite): in order, shuffled, and duplicated, each lifecycle ends in the right state and the record
 * never moves backward.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { metrics } from '../../../functions/shared/powertools.js';
import { type AppState, makeAppDef, makeAppHandle, stateRank } from '../../../lib/specs/index.js';
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

type Envelope = { source: string; 'detail-type': string; detail: Record<string, unknown> };

function fixture(path: string): Envelope {
  return JSON.parse(readFileSync(new URL(`../../fixtures/${path}`, import.meta.url), 'utf8')) as Envelope;
}
const batch = (name: string) => fixture(`aws-batch/events/batch-${name}.json`);
const sagemaker = (name: string) => fixture(`aws-sagemaker/events/sagemaker-${name}.json`);

/** The same events for a job with a fresh name, so every run gets its own record. */
function renamed(events: Envelope[], name: string): Envelope[] {
  return events.map((e) => {
    const detail = { ...e.detail };
    if ('jobName' in detail) detail.jobName = name;
    else detail.TrainingJobName = name;
    return { ...e, detail };
  });
}

let counter = 0;
async function recordFor(
  scheduler: 'aws_batch' | 'aws_sagemaker',
): Promise<{ handle: string; nativeName: string }> {
  counter += 1;
  const nativeName = `fixture-job-${counter}`;
  const appId = scheduler === 'aws_batch' ? `ml-gpu-queue:${nativeName}` : nativeName;
  const handle = makeAppHandle(scheduler, 'torchx', appId);
  await store.records.create({
    handle,
    scheduler,
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
  return { handle, nativeName };
}

function shuffled<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  let s = seed;
  for (let i = out.length - 1; i > 0; i--) {
    s = (s * 1_103_515_245 + 12_345) % 2 ** 31;
    const j = s % (i + 1);
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

/** Delivers events one by one and checks after each that (attempt, state rank) never decreases. */
async function deliver(handle: string, events: Envelope[]): Promise<AppState> {
  let last = { attempt: -1, rank: -2, terminal: false };
  for (const event of events) {
    await handleStateChange(event);
    const record = await store.records.get(handle);
    if (!record) throw new Error('record vanished');
    const now = {
      attempt: record.attempt,
      rank: stateRank(record.state),
      terminal: stateRank(record.state) === 4,
    };
    const forward = now.attempt > last.attempt || (now.attempt === last.attempt && now.rank >= last.rank);
    expect(forward, `moved backward to ${record.state} (attempt ${record.attempt})`).toBe(true);
    if (last.terminal) expect(now.terminal).toBe(true);
    last = now;
  }
  return (await store.records.get(handle))?.state as AppState;
}

const LIFECYCLES: {
  name: string;
  scheduler: 'aws_batch' | 'aws_sagemaker';
  events: Envelope[];
  final: AppState;
}[] = [
  {
    name: 'Batch single job that succeeds',
    scheduler: 'aws_batch',
    events: ['submitted', 'pending', 'runnable', 'starting', 'running', 'succeeded'].map((n) =>
      batch(`single-${n}`),
    ),
    final: 'SUCCEEDED',
  },
  {
    name: 'Batch single job retried, then failed',
    scheduler: 'aws_batch',
    events: ['submitted', 'runnable', 'starting', 'running', 'runnable-after-retry', 'failed'].map((n) =>
      batch(`single-${n}`),
    ),
    final: 'FAILED',
  },
  {
    name: 'Batch single job cancelled before it started',
    scheduler: 'aws_batch',
    events: ['submitted', 'pending', 'runnable', 'failed-cancelled'].map((n) => batch(`single-${n}`)),
    final: 'CANCELLED',
  },
  {
    name: 'Batch single job terminated while running',
    scheduler: 'aws_batch',
    events: ['submitted', 'runnable', 'starting', 'running', 'failed-terminated'].map((n) =>
      batch(`single-${n}`),
    ),
    final: 'CANCELLED',
  },
  {
    name: 'Batch multi-node job that succeeds (node events are ignored)',
    scheduler: 'aws_batch',
    events: [
      'submitted',
      'pending',
      'runnable',
      'starting',
      'running',
      'node0-running',
      'node1-succeeded',
      'succeeded',
    ].map((n) => batch(`mnp-${n}`)),
    final: 'SUCCEEDED',
  },
  {
    name: 'Batch multi-node job that fails',
    scheduler: 'aws_batch',
    events: ['submitted', 'runnable', 'starting', 'running', 'node0-running', 'failed'].map((n) =>
      batch(`mnp-${n}`),
    ),
    final: 'FAILED',
  },
  {
    name: 'SageMaker job that completes',
    scheduler: 'aws_sagemaker',
    events: [
      'inprogress-starting',
      'inprogress-pending',
      'inprogress-downloading',
      'inprogress-training',
      'inprogress-uploading',
      'completed',
    ].map(sagemaker),
    final: 'SUCCEEDED',
  },
  {
    name: 'SageMaker job that fails',
    scheduler: 'aws_sagemaker',
    events: ['inprogress-starting', 'inprogress-pending', 'inprogress-training', 'failed'].map(sagemaker),
    final: 'FAILED',
  },
  {
    name: 'SageMaker job stopped by a user',
    scheduler: 'aws_sagemaker',
    events: ['inprogress-starting', 'inprogress-training', 'stopping', 'stopped'].map(sagemaker),
    final: 'CANCELLED',
  },
  {
    name: 'SageMaker job stopped by its max runtime',
    scheduler: 'aws_sagemaker',
    events: ['inprogress-starting', 'inprogress-training', 'stopped-maxruntime'].map(sagemaker),
    final: 'FAILED',
  },
];

describe('state-change function', () => {
  describe.each(LIFECYCLES)('$name', ({ scheduler, events, final }) => {
    it(`ends ${final} when events arrive in order`, async () => {
      const { handle, nativeName } = await recordFor(scheduler);
      expect(await deliver(handle, renamed(events, nativeName))).toBe(final);
    });

    it(`ends ${final} for every one of 8 shuffled orders`, async () => {
      for (let seed = 1; seed <= 8; seed++) {
        const { handle, nativeName } = await recordFor(scheduler);
        expect(await deliver(handle, shuffled(renamed(events, nativeName), seed * 7919))).toBe(final);
      }
    });

    it(`ends ${final} when every event is delivered twice, shuffled`, async () => {
      const { handle, nativeName } = await recordFor(scheduler);
      const twice = renamed([...events, ...events], nativeName);
      expect(await deliver(handle, shuffled(twice, 4242))).toBe(final);
      const record = await store.records.get(handle);
      const states = record?.history.map((h) => h.to) ?? [];
      expect(new Set(states.filter((s) => stateRank(s) === 4)).size).toBeLessThanOrEqual(1);
    });
  });

  it('ignores events of jobs it did not launch, and events of other kinds', async () => {
    const doc = batch('doc-example-runnable');
    const counted = vi.spyOn(metrics, 'addMetric');
    expect(await handleStateChange(doc)).toEqual({ applied: false, reason: 'not an app we launched' });
    // The name index may lag a new record: looked up again three times, then counted as foreign.
    const names = counted.mock.calls.map((call) => call[0]);
    counted.mockRestore();
    expect(names).toEqual([
      'EventsLateIndexRetried',
      'EventsLateIndexRetried',
      'EventsLateIndexRetried',
      'EventsForeign',
    ]);
    expect(
      await handleStateChange({
        source: 'aws.ec2',
        'detail-type': 'EC2 Instance State-change Notification',
        detail: {},
      }),
    ).toEqual({
      applied: false,
      reason: 'not a state-change event we handle (aws.ec2/EC2 Instance State-change Notification)',
    });
  });

  it('ignores a multi-node child job event even for a job it launched', async () => {
    const { nativeName } = await recordFor('aws_batch');
    const [node] = renamed([batch('mnp-node1-succeeded')], nativeName);
    expect(await handleStateChange(node as Envelope)).toMatchObject({ applied: false });
  });

  it('accepts SageMaker timestamps written as strings (the documented example)', async () => {
    const { handle, nativeName } = await recordFor('aws_sagemaker');
    const [doc] = renamed([sagemaker('doc-example-completed')], nativeName);
    expect(await handleStateChange(doc as Envelope)).toMatchObject({ applied: true });
    expect((await store.records.get(handle))?.state).toBe('SUCCEEDED');
  });
});
