/**
 * Idempotency reservations: one item per (owner, Idempotency-Key), reserved with a conditional Put so
 * exactly one concurrent caller wins, completed with the submitted app's handle (and, when the scheduler
 * refused the submission, the answer it got), released when nothing was written.
 *
 * @module
 */
import type { IdempotencyLease, IdempotencyRejection, IdempotencyReservation } from '../runner/store.js';
import type { AppHandle, FieldIssue } from '../specs/index.js';
import { conditionalWrite, type Item, putIfAbsent, type StoreContext, writeOrCollide } from './context.js';
import { IdempotencyReservationError, StoreConflictError } from './errors.js';
import { IDEMPOTENCY_SORT_KEY, idempotencyPartitionKey } from './keys.js';
import { TABLE_ATTRIBUTES as A } from './table.js';
import {
  MAX_HANDLE_BYTES,
  requireText,
  requireTime,
  throwIfIssues,
  validateIdempotencyKey,
} from './validation.js';

/** `entity` attribute value of reservation items. */
const IDEMPOTENCY_ENTITY = 'Idempotency';

/** The primary key of the reservation of `key` for `owner`. */
function reservationKey(owner: string, key: string): Item {
  return { [A.partitionKey]: idempotencyPartitionKey(owner, key), [A.sortKey]: IDEMPOTENCY_SORT_KEY };
}

/** The idempotency half of the store: reserve, complete, release. */
export class IdempotencyKeys {
  constructor(private readonly context: StoreContext) {}

  /**
   * Reserves `key` for `owner` with a conditional Put. Exactly one concurrent caller gets
   * `reserved: true`; the others get the reservation as stored (with the handle once completed).
   * Reservations expire after the idempotency TTL (24 h by default).
   *
   * With a `lease`, the reservation records its holder and lease end:
   * - a Put whose response was lost (the SDK's retry then fails its condition) is recognised by the holder
   *   and still reserves;
   * - an uncompleted reservation with the same `requestHash` whose lease has ended is taken over with a
   *   conditional UpdateItem on the holder and lease it read (`takenOverFrom` names the earlier holder).
   *
   * @throws ValidationError naming `idempotencyKey`, `owner`, `requestHash` or `lease`.
   */
  async reserve(
    owner: string,
    key: string,
    requestHash: string,
    now: number,
    lease?: IdempotencyLease,
  ): Promise<IdempotencyReservation> {
    const issues: FieldIssue[] = [];
    requireText(issues, 'owner', owner, 1024);
    validateIdempotencyKey(issues, key);
    requireText(issues, 'requestHash', requestHash, 1024);
    requireTime(issues, 'now', now, false);
    if (lease !== undefined) {
      requireText(issues, 'lease.holder', lease.holder, MAX_HANDLE_BYTES);
      requireTime(issues, 'lease.until', lease.until, false);
    }
    throwIfIssues('idempotency reservation', issues);
    const nowSeconds = Math.floor(now / 1000);
    const item: Item = {
      ...reservationKey(owner, key),
      entity: IDEMPOTENCY_ENTITY,
      owner,
      idempotencyKey: key,
      requestHash,
      reservedAt: now,
      [A.expiresAt]: nowSeconds + this.context.idempotencyTtlSeconds,
    };
    if (lease !== undefined) {
      item.holder = lease.holder;
      item.leaseExpiresAt = lease.until;
    }
    for (let attempt = 0; attempt < 5; attempt++) {
      const put = await putIfAbsent(this.context, item, nowSeconds);
      if (put.applied) return { reserved: true };
      const existing = put.existing;
      if (!existing) continue;
      const completed = typeof existing.handle === 'string';
      if (lease !== undefined && !completed && existing.holder === lease.holder) {
        // Our own write (its response was lost and the SDK's retry failed the condition), or our takeover.
        const previous = existing.previousHolder;
        return typeof previous === 'string'
          ? { reserved: true, takenOverFrom: previous }
          : { reserved: true };
      }
      const leaseEnd = existing.leaseExpiresAt;
      if (
        lease !== undefined &&
        !completed &&
        existing.requestHash === requestHash &&
        typeof existing.holder === 'string' &&
        typeof leaseEnd === 'number' &&
        leaseEnd <= now
      ) {
        if (await this.takeOver(owner, key, existing.holder, leaseEnd, lease)) {
          return { reserved: true, takenOverFrom: existing.holder };
        }
        continue;
      }
      const reservation: IdempotencyReservation = {
        reserved: false,
        requestHash: String(existing.requestHash),
        reservedAt: Number(existing.reservedAt),
      };
      if (completed) {
        reservation.handle = existing.handle as string;
        const rejection = rejectionOf(existing.rejection);
        if (rejection) reservation.rejection = rejection;
      } else if (typeof existing.holder === 'string') {
        reservation.holder = existing.holder;
        if (typeof leaseEnd === 'number') reservation.leaseExpiresAt = leaseEnd;
      }
      return reservation;
    }
    throw new StoreConflictError(
      `Idempotency key '${key}' kept being reserved and released concurrently; try again`,
    );
  }

  /**
   * Moves an abandoned reservation to a new holder: one UpdateItem conditioned on the holder and lease end
   * that were read and on the reservation still being uncompleted, so one of several retries wins.
   *
   * @returns false when the reservation changed since it was read.
   */
  private async takeOver(
    owner: string,
    key: string,
    holder: string,
    leaseEnd: number,
    lease: IdempotencyLease,
  ): Promise<boolean> {
    const { client, tableName } = this.context;
    return conditionalWrite(this.context, 'UpdateItem', () =>
      client.update({
        TableName: tableName,
        Key: reservationKey(owner, key),
        UpdateExpression: 'SET #holder = :holder, #lease = :lease, #previous = :previous',
        ConditionExpression:
          '#holder = :previous AND #lease = :previousLease AND attribute_not_exists(#handle)',
        ExpressionAttributeNames: {
          '#holder': 'holder',
          '#lease': 'leaseExpiresAt',
          '#previous': 'previousHolder',
          '#handle': 'handle',
        },
        ExpressionAttributeValues: {
          ':holder': lease.holder,
          ':lease': lease.until,
          ':previous': holder,
          ':previousLease': leaseEnd,
        },
      }),
    );
  }

  /**
   * Attaches the submitted app's handle to a reservation (idempotent for the same handle); with
   * `rejection`, also the answer the refused submission got, in the same write.
   *
   * @throws IdempotencyReservationError when the reservation is gone or bound to another handle.
   */
  async complete(
    owner: string,
    key: string,
    handle: AppHandle,
    rejection?: IdempotencyRejection,
  ): Promise<void> {
    const issues: FieldIssue[] = [];
    requireText(issues, 'owner', owner, 1024);
    validateIdempotencyKey(issues, key);
    requireText(issues, 'handle', handle, MAX_HANDLE_BYTES);
    throwIfIssues('idempotency completion', issues);
    const { client, tableName } = this.context;
    const completion = await writeOrCollide(this.context, 'UpdateItem', reservationKey(owner, key), () =>
      client.update({
        TableName: tableName,
        Key: reservationKey(owner, key),
        UpdateExpression:
          rejection === undefined
            ? 'SET #handle = :handle'
            : 'SET #handle = :handle, #rejection = :rejection',
        ConditionExpression: 'attribute_exists(#pk) AND (attribute_not_exists(#handle) OR #handle = :handle)',
        ExpressionAttributeNames: {
          '#pk': A.partitionKey,
          '#handle': 'handle',
          ...(rejection === undefined ? {} : { '#rejection': 'rejection' }),
        },
        ExpressionAttributeValues: {
          ':handle': handle,
          ...(rejection === undefined ? {} : { ':rejection': storedRejection(rejection) }),
        },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    if (completion.applied) return;
    const existing = completion.existing;
    throw new IdempotencyReservationError(
      existing
        ? `Idempotency key '${key}' is already bound to ${String(existing.handle)}, not ${handle}`
        : `Idempotency key '${key}' has no reservation to complete (it expired or was released); ` +
            `${handle} was submitted without one`,
    );
  }

  /** Drops a reservation whose submission failed. A completed reservation (with a handle) is kept. */
  async release(owner: string, key: string): Promise<void> {
    const issues: FieldIssue[] = [];
    requireText(issues, 'owner', owner, 1024);
    validateIdempotencyKey(issues, key);
    throwIfIssues('idempotency release', issues);
    const { client, tableName } = this.context;
    // A completed reservation fails the condition and is kept.
    await conditionalWrite(this.context, 'DeleteItem', () =>
      client.delete({
        TableName: tableName,
        Key: reservationKey(owner, key),
        ConditionExpression: 'attribute_not_exists(#handle)',
        ExpressionAttributeNames: { '#handle': 'handle' },
      }),
    );
  }
}

/** Longest stored message of a rejection: the answer of a refused submission is short. */
const MAX_REJECTION_MESSAGE = 4096;

/** A rejection as stored: plain fields, the message and issues bounded so the item stays small. */
function storedRejection(rejection: IdempotencyRejection): Item {
  const stored: Item = {
    code: rejection.code,
    message: rejection.message.slice(0, MAX_REJECTION_MESSAGE),
    issues: rejection.issues
      .slice(0, 20)
      .map((i) => ({ path: i.path.slice(0, 256), message: i.message.slice(0, 1024) })),
  };
  if (rejection.retryable !== undefined) stored.retryable = rejection.retryable;
  return stored;
}

/** A stored rejection read back; undefined when absent or not in the shape {@link storedRejection} writes. */
function rejectionOf(value: unknown): IdempotencyRejection | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const { code, message, issues, retryable } = value as Record<string, unknown>;
  if (typeof code !== 'string' || typeof message !== 'string') return undefined;
  const rejection: IdempotencyRejection = {
    code: code as IdempotencyRejection['code'],
    message,
    issues: (Array.isArray(issues) ? issues : []).flatMap((i: unknown) => {
      const { path, message: said } = (i ?? {}) as Record<string, unknown>;
      return typeof path === 'string' && typeof said === 'string' ? [{ path, message: said }] : [];
    }),
  };
  if (typeof retryable === 'boolean') rejection.retryable = retryable;
  return rejection;
}
