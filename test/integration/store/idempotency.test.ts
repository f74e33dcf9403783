import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ValidationError } from '../../../lib/specs/index.js';
import {
  DEFAULT_IDEMPOTENCY_TTL_SECONDS,
  type DynamoAppRecordStore,
  IdempotencyReservationError,
} from '../../../lib/store/index.js';
import { type Dynalite, startDynalite } from '../../helpers/dynalite.js';
import { ALICE, BOB, makeStore, T0 } from './fixtures.js';

let db: Dynalite;
let store: DynamoAppRecordStore;
let keyCounter = 0;

beforeAll(async () => {
  db = await startDynalite();
  ({ store } = makeStore(db.client, db.tableName));
});
afterAll(() => db.close());

function freshKey(): string {
  keyCounter += 1;
  return `request-${keyCounter}`;
}

const HANDLE = 'aws_batch://torchx/gpu-queue:trainer-k3x9';

describe('DynamoAppRecordStore idempotency keys', () => {
  it('reserves a new key', async () => {
    expect(await store.idempotency.reserve(ALICE, freshKey(), 'hash-a', T0)).toEqual({ reserved: true });
  });

  it('returns the existing reservation to a second caller', async () => {
    const key = freshKey();
    await store.idempotency.reserve(ALICE, key, 'hash-a', T0);
    expect(await store.idempotency.reserve(ALICE, key, 'hash-b', T0 + 5)).toEqual({
      reserved: false,
      requestHash: 'hash-a',
      reservedAt: T0,
    });
  });

  it('keeps the answer of a refused submission with the handle, and gives it to every later caller', async () => {
    const key = freshKey();
    const rejection = {
      code: 'BackendNotConfigured' as const,
      message: 'batch:SubmitJob needs an AWS region',
      issues: [{ path: 'scheduler', message: 'needs AWS' }],
      retryable: false,
    };
    await store.idempotency.reserve(ALICE, key, 'hash-a', T0);
    await store.idempotency.complete(ALICE, key, HANDLE, rejection);
    expect(await store.idempotency.reserve(ALICE, key, 'hash-a', T0 + 5)).toEqual({
      reserved: false,
      handle: HANDLE,
      rejection,
      requestHash: 'hash-a',
      reservedAt: T0,
    });
  });

  it('returns the handle once the reservation is completed', async () => {
    const key = freshKey();
    await store.idempotency.reserve(ALICE, key, 'hash-a', T0);
    await store.idempotency.complete(ALICE, key, HANDLE);
    expect(await store.idempotency.reserve(ALICE, key, 'hash-a', T0 + 5)).toEqual({
      reserved: false,
      handle: HANDLE,
      requestHash: 'hash-a',
      reservedAt: T0,
    });
  });

  it('lets exactly one of 50 concurrent reservations win', async () => {
    const key = freshKey();
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => store.idempotency.reserve(ALICE, key, `hash-${i}`, T0 + i)),
    );
    const winners = results.flatMap((r, i) => (r.reserved ? [i] : []));
    expect(winners).toHaveLength(1);
    const winner = winners[0] ?? -1;
    for (const result of results) {
      if (!result.reserved)
        expect(result).toEqual({ reserved: false, requestHash: `hash-${winner}`, reservedAt: T0 + winner });
    }
  });

  it('keeps owners apart, even when the parts contain the separator', async () => {
    expect(await store.idempotency.reserve('a#b', 'c', 'h1', T0)).toEqual({ reserved: true });
    expect(await store.idempotency.reserve('a', 'b#c', 'h2', T0)).toEqual({ reserved: true });
    const key = freshKey();
    expect(await store.idempotency.reserve(ALICE, key, 'h', T0)).toEqual({ reserved: true });
    expect(await store.idempotency.reserve(BOB, key, 'h', T0)).toEqual({ reserved: true });
  });

  it('releases an unfinished reservation so a retry can reserve again', async () => {
    const key = freshKey();
    await store.idempotency.reserve(ALICE, key, 'hash-a', T0);
    await store.idempotency.release(ALICE, key);
    expect(await store.idempotency.reserve(ALICE, key, 'hash-a', T0 + 10)).toEqual({ reserved: true });
  });

  it('never releases a completed reservation', async () => {
    const key = freshKey();
    await store.idempotency.reserve(ALICE, key, 'hash-a', T0);
    await store.idempotency.complete(ALICE, key, HANDLE);
    await store.idempotency.release(ALICE, key);
    expect(await store.idempotency.reserve(ALICE, key, 'hash-a', T0 + 10)).toMatchObject({
      reserved: false,
      handle: HANDLE,
    });
  });

  it('ignores the release of an unknown key', async () => {
    await expect(store.idempotency.release(ALICE, freshKey())).resolves.toBeUndefined();
  });

  it('completes idempotently with the same handle and refuses another handle', async () => {
    const key = freshKey();
    await store.idempotency.reserve(ALICE, key, 'hash-a', T0);
    await store.idempotency.complete(ALICE, key, HANDLE);
    await expect(store.idempotency.complete(ALICE, key, HANDLE)).resolves.toBeUndefined();
    await expect(store.idempotency.complete(ALICE, key, 'aws_batch://torchx/q:other')).rejects.toBeInstanceOf(
      IdempotencyReservationError,
    );
  });

  it('refuses to complete a key that was never reserved', async () => {
    await expect(store.idempotency.complete(ALICE, freshKey(), HANDLE)).rejects.toThrow(/no reservation/);
  });

  it('stores the reservation with a 24 h TTL', async () => {
    const key = freshKey();
    await store.idempotency.reserve(ALICE, key, 'hash-a', T0);
    const { Item } = await db.itemClient.get({
      TableName: db.tableName,
      Key: { pk: `IDEM#${encodeURIComponent(ALICE)}#${key}`, sk: 'I' },
      ConsistentRead: true,
    });
    expect(Item).toMatchObject({
      entity: 'Idempotency',
      requestHash: 'hash-a',
      reservedAt: T0,
      expiresAt: Math.floor(T0 / 1000) + DEFAULT_IDEMPOTENCY_TTL_SECONDS,
    });
  });

  it('treats a reservation past its TTL as free (TTL deletion is eventual)', async () => {
    const key = freshKey();
    await store.idempotency.reserve(ALICE, key, 'hash-a', T0);
    const later = T0 + (DEFAULT_IDEMPOTENCY_TTL_SECONDS + 1) * 1000;
    expect(await store.idempotency.reserve(ALICE, key, 'hash-b', later)).toEqual({ reserved: true });
    expect(await store.idempotency.reserve(ALICE, key, 'hash-c', later)).toMatchObject({
      requestHash: 'hash-b',
    });
  });

  it.each([
    ['idempotencyKey', ALICE, ''],
    ['idempotencyKey', ALICE, 'k'.repeat(256)],
    ['owner', '', 'key'],
  ])('rejects a bad %s', async (path, owner, key) => {
    const error = await store.idempotency.reserve(owner, key, 'hash', T0).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).issues.map((issue) => issue.path)).toEqual([path]);
  });

  describe('with a lease', () => {
    const A = 'aws_batch://torchx/q:attempt-a';
    const B = 'aws_batch://torchx/q:attempt-b';

    it('recognises its own holder (a retried Put whose first response was lost) as reserved', async () => {
      const key = freshKey();
      expect(await store.idempotency.reserve(ALICE, key, 'h', T0, { holder: A, until: T0 + 30_000 })).toEqual(
        {
          reserved: true,
        },
      );
      expect(
        await store.idempotency.reserve(ALICE, key, 'h', T0 + 1, { holder: A, until: T0 + 30_000 }),
      ).toEqual({ reserved: true });
    });

    it('shows the holder and its lease to another request while the lease runs', async () => {
      const key = freshKey();
      await store.idempotency.reserve(ALICE, key, 'h', T0, { holder: A, until: T0 + 30_000 });
      expect(
        await store.idempotency.reserve(ALICE, key, 'h', T0 + 29_999, { holder: B, until: T0 + 60_000 }),
      ).toEqual({
        reserved: false,
        requestHash: 'h',
        reservedAt: T0,
        holder: A,
        leaseExpiresAt: T0 + 30_000,
      });
    });

    it('lets the same request take over once the lease has ended, exactly once among concurrent retries', async () => {
      const key = freshKey();
      await store.idempotency.reserve(ALICE, key, 'h', T0, { holder: A, until: T0 + 30_000 });
      const retries = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          store.idempotency.reserve(ALICE, key, 'h', T0 + 30_000, {
            holder: `aws_batch://torchx/q:retry-${i}`,
            until: T0 + 60_000,
          }),
        ),
      );
      const winners = retries.filter((r) => r.reserved);
      expect(winners).toEqual([{ reserved: true, takenOverFrom: A }]);
      // The winner asking again (its UpdateItem response lost) still holds it, and still learns whom it replaced.
      const winner = retries.findIndex((r) => r.reserved);
      expect(
        await store.idempotency.reserve(ALICE, key, 'h', T0 + 30_001, {
          holder: `aws_batch://torchx/q:retry-${winner}`,
          until: T0 + 60_000,
        }),
      ).toEqual({ reserved: true, takenOverFrom: A });
    });

    it('never lets a different request body take over, nor anyone take over a completed reservation', async () => {
      const key = freshKey();
      await store.idempotency.reserve(ALICE, key, 'h', T0, { holder: A, until: T0 + 30_000 });
      expect(
        await store.idempotency.reserve(ALICE, key, 'other', T0 + 60_000, {
          holder: B,
          until: T0 + 90_000,
        }),
      ).toMatchObject({ reserved: false, requestHash: 'h', holder: A });
      await store.idempotency.complete(ALICE, key, A);
      expect(
        await store.idempotency.reserve(ALICE, key, 'h', T0 + 60_000, { holder: B, until: T0 + 90_000 }),
      ).toEqual({ reserved: false, requestHash: 'h', reservedAt: T0, handle: A });
    });
  });
});
