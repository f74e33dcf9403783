/**
 * The Idempotency-Key protocol on its own (`IdempotencyHandler`), over an in-memory persistence with the
 * store's reservation semantics: it needs no DynamoDB and no Runner. The DynamoDB layer's side is tested
 * against dynalite in test/integration/store/idempotency.test.ts.
 */
import { describe, expect, it } from 'vitest';
import {
  IdempotencyConflictError,
  IdempotencyHandler,
  type IdempotencyRejection,
  type IdempotencyReservation,
  type IdempotentSubmission,
  ReplayedRejectionError,
  type RunResult,
} from '../../../lib/runner/index.js';
import { BackendError } from '../../../lib/schedulers/index.js';
import type { ApiErrorCode, AppRecord } from '../../../lib/specs/index.js';

interface Stored {
  requestHash: string;
  holder: string;
  handle?: string;
  rejection?: IdempotencyRejection;
}

/** Reservations in memory: reserve once, complete, release an uncompleted one. */
function memoryStore(records: Map<string, AppRecord>) {
  const reservations = new Map<string, Stored>();
  const idempotency = {
    async reserve(
      owner: string,
      key: string,
      requestHash: string,
      _now: number,
      lease?: { holder: string },
    ): Promise<IdempotencyReservation> {
      const existing = reservations.get(`${owner}/${key}`);
      if (!existing) {
        reservations.set(`${owner}/${key}`, { requestHash, holder: lease?.holder ?? '' });
        return { reserved: true };
      }
      return { reserved: false, reservedAt: 0, ...existing };
    },
    async complete(owner: string, key: string, handle: string, rejection?: IdempotencyRejection) {
      const existing = reservations.get(`${owner}/${key}`);
      if (existing) Object.assign(existing, { handle, ...(rejection ? { rejection } : {}) });
    },
    async release(owner: string, key: string) {
      if (reservations.get(`${owner}/${key}`)?.handle === undefined) reservations.delete(`${owner}/${key}`);
    },
  };
  return { reservations, records: { get: async (handle: string) => records.get(handle) }, idempotency };
}

const HANDLE = 'aws_batch://torchx/q:train-1';

function setup() {
  const records = new Map<string, AppRecord>();
  const store = memoryStore(records);
  const handler = new IdempotencyHandler({ store, now: () => 0, sleep: async () => undefined });
  let submissions = 0;
  const submission = (
    submit: IdempotentSubmission['submit'],
    overrides: Partial<IdempotentSubmission> = {},
  ): IdempotentSubmission => ({
    owner: 'alice',
    key: 'k-1',
    requestHash: 'hash-1',
    handle: HANDLE,
    leaseUntil: 30_000,
    waitUntil: 0,
    submit: async (onRejected) => {
      submissions += 1;
      return submit(onRejected);
    },
    settleAbandoned: async () => undefined,
    rejectionOf: (error) => ({ code: error.code as ApiErrorCode, message: error.message, issues: [] }),
    ...overrides,
  });
  const accepted = async (): Promise<RunResult> => {
    const record = { handle: HANDLE, state: 'SUBMITTED' } as AppRecord;
    records.set(HANDLE, record);
    return { handle: HANDLE, record, created: true };
  };
  return { store, handler, submission, accepted, submissions: () => submissions };
}

describe('IdempotencyHandler', () => {
  it('submits once, completes the key with the handle and answers a replay with the same app', async () => {
    const { store, handler, submission, accepted, submissions } = setup();
    expect((await handler.handle(submission(accepted))).created).toBe(true);
    expect(store.reservations.get('alice/k-1')?.handle).toBe(HANDLE);
    const replay = await handler.handle(submission(accepted));
    expect(replay).toMatchObject({ handle: HANDLE, created: false });
    expect(submissions()).toBe(1);
  });

  it('keeps a refusal with the key and replays the same error without submitting again', async () => {
    const { handler, submission, submissions } = setup();
    const refused = submission(async (onRejected) => {
      const error = new BackendError('jobQueue q is DISABLED', false);
      await onRejected(error);
      throw error;
    });
    await expect(handler.handle(refused)).rejects.toThrow('jobQueue q is DISABLED');
    const replay = await handler.handle(refused).catch((e: unknown) => e);
    expect(replay).toBeInstanceOf(ReplayedRejectionError);
    expect(replay).toMatchObject({ code: 'BackendError', message: 'jobQueue q is DISABLED' });
    expect(submissions()).toBe(1);
  });

  it('refuses the same key for a different request, submitting nothing', async () => {
    const { handler, submission, accepted, submissions } = setup();
    await handler.handle(submission(accepted));
    const other = submission(accepted, { requestHash: 'hash-2' });
    await expect(handler.handle(other)).rejects.toBeInstanceOf(IdempotencyConflictError);
    expect(submissions()).toBe(1);
  });

  it('frees the key when the submission failed before anything was written', async () => {
    const { store, handler, submission } = setup();
    const broken = submission(async () => {
      throw new Error('the record could not be created');
    });
    await expect(handler.handle(broken)).rejects.toThrow('could not be created');
    expect(store.reservations.has('alice/k-1')).toBe(false);
  });
});
