/**
 * Idempotency reservations: one item per (owner, Idempotency-Key), reserved with a conditional Put so
 * exactly one concurrent caller wins, completed with the submitted app's handle, released when the
 * submission failed.
 *
 * @module
 */
import { DeleteCommand, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { IdempotencyReservation } from '../runner/store.js';
import type { AppHandle, FieldIssue } from '../specs/index.js';
import { call, type Item, putIfAbsent, type StoreContext } from './context.js';
import { IdempotencyReservationError, isConditionalCheckFailed, StoreConflictError } from './errors.js';
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

/** The idempotency half of the store: reserve, complete, release. */
export class IdempotencyKeys {
  constructor(private readonly context: StoreContext) {}

  /**
   * Reserves `key` for `owner` with a conditional Put. Exactly one concurrent caller gets
   * `reserved: true`; the others get the reservation as stored (with the handle once completed).
   * Reservations expire after the idempotency TTL (24 h by default).
   *
   * @throws ValidationError naming `idempotencyKey`, `owner` or `requestHash`.
   */
  async reserve(
    owner: string,
    key: string,
    requestHash: string,
    now: number,
  ): Promise<IdempotencyReservation> {
    const issues: FieldIssue[] = [];
    requireText(issues, 'owner', owner, 1024);
    validateIdempotencyKey(issues, key);
    requireText(issues, 'requestHash', requestHash, 1024);
    requireTime(issues, 'now', now, false);
    throwIfIssues('idempotency reservation', issues);
    const nowSeconds = Math.floor(now / 1000);
    const item: Item = {
      [A.partitionKey]: idempotencyPartitionKey(owner, key),
      [A.sortKey]: IDEMPOTENCY_SORT_KEY,
      entity: IDEMPOTENCY_ENTITY,
      owner,
      idempotencyKey: key,
      requestHash,
      reservedAt: now,
      [A.expiresAt]: nowSeconds + this.context.idempotencyTtlSeconds,
    };
    for (let attempt = 0; attempt < 5; attempt++) {
      if (await putIfAbsent(this.context, item, nowSeconds)) return { reserved: true };
      const existing = await this.getItem(owner, key);
      const expiresAt = existing?.[A.expiresAt];
      if (existing && !(typeof expiresAt === 'number' && expiresAt <= nowSeconds)) {
        const reservation: IdempotencyReservation = {
          reserved: false,
          requestHash: String(existing.requestHash),
          reservedAt: Number(existing.reservedAt),
        };
        if (typeof existing.handle === 'string') reservation.handle = existing.handle;
        return reservation;
      }
      // Released or expired between our Put and our read: try to reserve again.
    }
    throw new StoreConflictError(
      `Idempotency key '${key}' kept being reserved and released concurrently; try again`,
    );
  }

  /**
   * Attaches the submitted app's handle to a reservation (idempotent for the same handle).
   *
   * @throws IdempotencyReservationError when the reservation is gone or bound to another handle.
   */
  async complete(owner: string, key: string, handle: AppHandle): Promise<void> {
    const issues: FieldIssue[] = [];
    requireText(issues, 'owner', owner, 1024);
    validateIdempotencyKey(issues, key);
    requireText(issues, 'handle', handle, MAX_HANDLE_BYTES);
    throwIfIssues('idempotency completion', issues);
    const { client, tableName } = this.context;
    try {
      await call(this.context, 'UpdateItem', () =>
        client.send(
          new UpdateCommand({
            TableName: tableName,
            Key: { [A.partitionKey]: idempotencyPartitionKey(owner, key), [A.sortKey]: IDEMPOTENCY_SORT_KEY },
            UpdateExpression: 'SET #handle = :handle',
            ConditionExpression:
              'attribute_exists(#pk) AND (attribute_not_exists(#handle) OR #handle = :handle)',
            ExpressionAttributeNames: { '#pk': A.partitionKey, '#handle': 'handle' },
            ExpressionAttributeValues: { ':handle': handle },
          }),
        ),
      );
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
      const existing = await this.getItem(owner, key);
      throw new IdempotencyReservationError(
        existing
          ? `Idempotency key '${key}' is already bound to ${String(existing.handle)}, not ${handle}`
          : `Idempotency key '${key}' has no reservation to complete (it expired or was released); ` +
              `${handle} was submitted without one`,
      );
    }
  }

  /** Drops a reservation whose submission failed. A completed reservation (with a handle) is kept. */
  async release(owner: string, key: string): Promise<void> {
    const issues: FieldIssue[] = [];
    requireText(issues, 'owner', owner, 1024);
    validateIdempotencyKey(issues, key);
    throwIfIssues('idempotency release', issues);
    const { client, tableName } = this.context;
    try {
      await call(this.context, 'DeleteItem', () =>
        client.send(
          new DeleteCommand({
            TableName: tableName,
            Key: { [A.partitionKey]: idempotencyPartitionKey(owner, key), [A.sortKey]: IDEMPOTENCY_SORT_KEY },
            ConditionExpression: 'attribute_not_exists(#handle)',
            ExpressionAttributeNames: { '#handle': 'handle' },
          }),
        ),
      );
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
    }
  }

  private async getItem(owner: string, key: string): Promise<Item | undefined> {
    const { client, tableName } = this.context;
    const output = await call(this.context, 'GetItem', () =>
      client.send(
        new GetCommand({
          TableName: tableName,
          Key: { [A.partitionKey]: idempotencyPartitionKey(owner, key), [A.sortKey]: IDEMPOTENCY_SORT_KEY },
          ConsistentRead: true,
        }),
      ),
    );
    return output.Item;
  }
}
