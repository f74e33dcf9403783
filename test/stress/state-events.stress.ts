/**
 * Stress: 20,000 Batch state-change events for 1,000 apps (retried attempts included), shuffled, ~30%
 * duplicated, delivered 32 at a time through the state-change function into dynalite. Every app ends in its
 * final state and no record's history ever moves backward.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AppState, makeAppDef, makeAppHandle, stateRank } from '../../lib/specs/index.js';
import { batchLifecycle, type Envelope, T0 } from '../reliability/helpers/batch-events.js';
import { type FunctionsEnvironment, startFunctionsEnvironment } from '../reliability/helpers/environment.js';
import { seededRandom } from '../reliability/helpers/fake-aws.js';

let env: FunctionsEnvironment;
beforeAll(async () => {
  env = await startFunctionsEnvironment();
});
afterAll(() => env.close());

const APPS = 1_000;
const TOTAL = 20_000;
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
      await store.records.create({
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
      base.push(...batchLifecycle(jobName, i % 8 === 0 ? 5 : 4, final));
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
        const record = await store.records.get(handle);
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
      const record = await store.records.get(handle);
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
