/** Builders shared by the store's integration tests. */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  type AppState,
  type AppStateTransition,
  makeAppDef,
  makeAppHandle,
  makeRole,
  type NewAppRecord,
} from '../../../lib/specs/index.js';
import { DynamoAppRecordStore, type DynamoAppRecordStoreOptions } from '../../../lib/store/index.js';

export const ALICE = 'arn:aws:iam::123456789012:user/alice';
export const BOB = 'arn:aws:iam::123456789012:role/bob';
export const T0 = 1_700_000_000_000;

let counter = 0;

/** A new Batch app record with a unique app id; override any field. */
export function newRecord(overrides: Partial<NewAppRecord> = {}): NewAppRecord {
  counter += 1;
  const scheduler = overrides.scheduler ?? 'aws_batch';
  const session = overrides.session ?? 'torchx';
  const nativeName = overrides.nativeName ?? `trainer-${process.pid}-${counter}`;
  const appId = overrides.appId ?? `gpu-queue:${nativeName}`;
  const app = makeAppDef({
    name: 'trainer',
    roles: [
      makeRole({
        name: 'trainer',
        image: 'pytorch/pytorch:2.5',
        entrypoint: 'python',
        args: ['-m', 'torch.distributed.run', 'train.py'],
        env: { LOGLEVEL: 'INFO' },
        numReplicas: 2,
      }),
    ],
  });
  return {
    handle: makeAppHandle(scheduler, session, appId),
    scheduler,
    session,
    appId,
    nativeName,
    owner: ALICE,
    name: 'trainer',
    app,
    cfg: { queue: 'gpu-queue', privileged: false },
    state: 'SUBMITTED',
    createdAt: T0,
    ...overrides,
  };
}

/** A transition from the event source. */
export function event(
  state: AppState,
  attempt: number,
  eventTime: number,
  extra: Partial<AppStateTransition> = {},
) {
  return { state, attempt, eventTime, source: 'event' as const, ...extra };
}

/** A store on the given client and table with a controllable clock. */
export function makeStore(
  client: DynamoDBClient,
  tableName: string,
  options: Partial<DynamoAppRecordStoreOptions> = {},
): { store: DynamoAppRecordStore; clock: { now: number } } {
  const clock = { now: T0 + 60_000 };
  const store = new DynamoAppRecordStore({ tableName, client, now: () => clock.now, ...options });
  return { store, clock };
}

/** A deterministic PRNG (mulberry32) so shuffles are reproducible. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Fisher–Yates shuffle with the given PRNG (returns a new array). */
export function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

/**
 * An AWS Batch job that fails once and succeeds on its retry, as Batch reports it (RUNNABLE and STARTING map
 * to PENDING; `attempt` is the number of finished attempts).
 */
export const BATCH_LIFECYCLE_WITH_RETRY: readonly AppStateTransition[] = [
  event('PENDING', 0, T0 + 1000, { reason: 'RUNNABLE' }),
  event('PENDING', 0, T0 + 2000, { reason: 'STARTING' }),
  event('RUNNING', 0, T0 + 3000),
  event('PENDING', 1, T0 + 4000, { reason: 'RUNNABLE after attempt 1 failed' }),
  event('PENDING', 1, T0 + 5000, { reason: 'STARTING' }),
  event('RUNNING', 1, T0 + 6000),
  event('SUCCEEDED', 2, T0 + 7000, { reason: 'Essential container in task exited' }),
];
