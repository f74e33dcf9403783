/**
 * Stress: 20,000 Batch state-change events for 1,000 apps (retried attempts included), shuffled, ~30%
 * duplicated, delivered 32 at a time through the state-change function into dynalite. Every app ends in its
 * final state and no record's history ever moves backward.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AppState, makeAppDef, makeAppHandle, stateRank } from '../../lib/specs/index.js';
import { type FunctionsEnvironment, startFunctionsEnvironment } from '../reliability/helpers/environment.js';
import { seededRandom } from '../reliability/helpers/fake-aws.js';

let env: FunctionsEnvironment;
beforeAll(async () => {
  env = await startFunctionsEnvironment();
});
afterAll(() => env.close());

const APPS = 1_000;
const TOTAL = 20_000;
const T0 = 1_767_000_000_000;

type Envelope = { source: string; 'detail-type': string; detail: Record<string, unknown> };

function batchEvent(jobName: string, status: string, attempts: number, time: number): Envelope {
  const detail: Record<string, unknown> = {
    jobName,
    jobId: `id-${jobName}`,
    jobQueue: 'arn:aws:batch:us-east-1:123456789012:job-queue/ml-gpu-queue',
    status,
    attempts: Array.from({ length: attempts }, (_, i) => ({ container: { exitCode: 1 }, startedAt: T0 + i })),
    createdAt: T0,
  };
  if (['STARTING', 'RUNNING', 'SUCCEEDED', 'FAILED'].includes(status)) detail.startedAt = time;
  if (['SUCCEEDED', 'FAILED'].includes(status)) {
    detail.stoppedAt = time + 1;
    if (status === 'FAILED') detail.statusReason = 'Essential container in task exited';
  }
  return { source: 'aws.batch', 'detail-type': 'Batch Job State Change', detail };
}

/** One app's events in order: k attempts (the first k-1 fail and are retried), then the final state. */
function lifecycle(jobName: string, attempts: number, final: 'SUCCEEDED' | 'FAILED'): Envelope[] {
  const events = [batchEvent(jobName, 'SUBMITTED', 0, T0), batchEvent(jobName, 'PENDING', 0, T0)];
  for (let a = 0; a < attempts; a++) {
    const t = T0 + (a + 1) * 1000;
    events.push(batchEvent(jobName, 'RUNNABLE', a, t), batchEvent(jobName, 'STARTING', a, t + 10));
    events.push(batchEvent(jobName, 'RUNNING', a, t + 20));
  }
  events.push(batchEvent(jobName, final, final === 'FAILED' ? attempts : attempts - 1, T0 + 100_000));
  return events;
}

describe('20,000 shuffled, duplicated state-change events for 1,000 apps', () => {
  it('ends every app in its final state, never moving a record backward', async () => {
    const random = seededRandom(2026);
    const store = env.container.store();
    const expected = new Map<string, { handle: string; final: AppState }>();
    const base: Envelope[] = [];
    for (let i = 0; i < APPS; i++) {
      const jobName = `stress-${i}`;
      const appId = `ml-gpu-queue:${jobName}`;
      const handle = makeAppHandle('aws_batch', 'torchx', appId);
      await store.create({
        handle,
        scheduler: 'aws_batch',
        session: 'torchx',
        appId,
        nativeName: jobName,
        owner: 'alice',
        name: 'stress',
        app: makeAppDef({ name: 'stress' }),
        cfg: {},
        state: 'SUBMITTED',
        createdAt: T0,
      });
      const final = i % 3 === 0 ? 'FAILED' : 'SUCCEEDED';
      expected.set(jobName, { handle, final });
      base.push(...lifecycle(jobName, i % 8 === 0 ? 5 : 4, final));
    }
    const events = [...base];
    while (events.length < TOTAL) events.push(base[Math.floor(random() * base.length)] as Envelope);
    for (let i = events.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [events[i], events[j]] = [events[j] as Envelope, events[i] as Envelope];
    }
    expect(events).toHaveLength(TOTAL);
    expect((TOTAL - base.length) / base.length).toBeGreaterThan(0.28);

    let next = 0;
    let redelivered = 0;
    const worker = async () => {
      while (next < events.length) {
        const event = events[next++] as Envelope;
        // A throw is what EventBridge retries: deliver the event again, as it would.
        for (let attempt = 0; ; attempt++) {
          try {
            await env.handleStateChange(event);
            break;
          } catch (error) {
            redelivered += 1;
            if (attempt >= 5) throw error;
          }
        }
      }
    };
    // While events flow, an observer reads records and checks that (attempt, state rank) never decreases.
    const wrong: string[] = [];
    const seen = new Map<string, { attempt: number; rank: number }>();
    let done = false;
    const handles = [...expected.values()].map((e) => e.handle);
    const observer = async () => {
      while (!done) {
        const handle = handles[Math.floor(random() * handles.length)] as string;
        const record = await store.get(handle);
        if (record) {
          const now = { attempt: record.attempt, rank: stateRank(record.state) };
          const last = seen.get(handle);
          if (
            last &&
            (now.attempt < last.attempt || (now.attempt === last.attempt && now.rank < last.rank))
          ) {
            wrong.push(`${handle}: moved backward to ${record.state} (attempt ${record.attempt})`);
          }
          seen.set(handle, now);
        }
      }
    };
    const observing = observer();
    await Promise.all(Array.from({ length: 32 }, worker));
    done = true;
    await observing;

    for (const [jobName, { handle, final }] of expected) {
      const record = await store.get(handle);
      if (record?.state !== final) wrong.push(`${jobName}: ${record?.state} (want ${final})`);
      const history = record?.history ?? [];
      history.forEach((step, i) => {
        if (i > 0 && history[i - 1]?.to !== step.from) wrong.push(`${jobName}: history breaks at ${i}`);
        if (stateRank(step.from) === 4) wrong.push(`${jobName}: left terminal ${step.from} for ${step.to}`);
      });
    }
    expect(wrong.slice(0, 10)).toEqual([]);
    console.info(`delivered ${TOTAL} events (${base.length} distinct), redelivered ${redelivered}`);
  });
});
