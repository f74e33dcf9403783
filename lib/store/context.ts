/**
 * What the parts of {@link DynamoAppRecordStore} share: the DynamoDB client, the table, the clock, the
 * retention settings and the one place DynamoDB errors become store errors (`call`). Records, queries and
 * idempotency reservations are separate modules over one context, as Powertools splits its idempotency
 * package into a handler, a persistence base and a DynamoDB layer.
 *
 * @module
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { isConditionalCheckFailed, toStoreError } from './errors.js';
import { collidedItem, type Item, type ItemClient, newDynamoDbClient } from './item-client.js';
import { TABLE_ATTRIBUTES as A } from './table.js';

export type { Item } from './item-client.js';

/** The shared state of the store's parts. */
export interface StoreContext {
  /** The app record table. */
  readonly tableName: string;
  /** The item operations every call goes through (over the SDK's DynamoDB client). */
  readonly client: ItemClient;
  /** Seconds a terminal record is kept before TTL deletes it. */
  readonly retentionSeconds: number;
  /** Seconds an idempotency reservation is kept. */
  readonly idempotencyTtlSeconds: number;
  /** Clock (epoch ms). */
  readonly now: () => number;
  /** Attempts of a transition that keeps losing races before it gives up. */
  readonly maxTransitionAttempts: number;
}

let sharedClient: DynamoDBClient | undefined;

/** The default SDK DynamoDB client (region, endpoint and credentials from the environment), built once per process. */
export function defaultDynamoDbClient(): DynamoDBClient {
  sharedClient ??= newDynamoDbClient();
  return sharedClient;
}

/** The context's clock in whole seconds (TTL attributes are epoch seconds). */
export function nowSeconds(context: StoreContext): number {
  return Math.floor(context.now() / 1000);
}

/** Runs one DynamoDB call, turning its errors other than a failed condition into store errors. */
export async function call<T>(context: StoreContext, operation: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (isConditionalCheckFailed(error)) throw error;
    throw toStoreError(error, operation, context.tableName);
  }
}

/**
 * Runs one conditional write through {@link call}.
 *
 * @returns true when it was applied, false when its condition failed (nothing was written).
 * @throws StoreError for any other failure.
 * @example
 * ```ts
 * const applied = await conditionalWrite(context, 'DeleteItem', () => context.client.delete(input));
 * ```
 */
export async function conditionalWrite(
  context: StoreContext,
  operation: string,
  write: () => Promise<unknown>,
): Promise<boolean> {
  return (await refusalOf(context, operation, write)) === undefined;
}

/** Runs one conditional write: undefined when it was applied, DynamoDB's refusal when its condition failed. */
async function refusalOf(
  context: StoreContext,
  operation: string,
  write: () => Promise<unknown>,
): Promise<unknown> {
  try {
    await call(context, operation, write);
    return undefined;
  } catch (error) {
    if (isConditionalCheckFailed(error)) return error;
    throw error;
  }
}

/** A conditional write's outcome: applied, or refused with the item it collided with. */
export type WriteOutcome = { applied: true } | { applied: false; existing: Item | undefined };

/**
 * Runs one conditional write sent with `ReturnValuesOnConditionCheckFailure: 'ALL_OLD'`: when its condition
 * fails, DynamoDB answers the item it collided with, so no read follows. An error without the item (none under
 * the key, or an emulator such as dynalite that ignores the parameter) falls back to one consistent read of `key`.
 *
 * @throws StoreError for any failure other than the condition.
 */
export async function writeOrCollide(
  context: StoreContext,
  operation: string,
  key: Item,
  write: () => Promise<unknown>,
): Promise<WriteOutcome> {
  const refusal = await refusalOf(context, operation, write);
  if (refusal === undefined) return { applied: true };
  return { applied: false, existing: collidedItem(refusal) ?? (await readItem(context, key)) };
}

/** The item under `key` (a consistent read), or undefined. */
export async function readItem(context: StoreContext, key: Item): Promise<Item | undefined> {
  const { client, tableName } = context;
  const output = await call(context, 'GetItem', () =>
    client.get({ TableName: tableName, Key: key, ConsistentRead: true }),
  );
  return output.Item;
}

/** True when `item` is past its TTL at `now` (epoch seconds): it counts as gone though DynamoDB still holds it. */
export function isExpired(item: Item, now: number): boolean {
  const expiresAt = item[A.expiresAt];
  return typeof expiresAt === 'number' && expiresAt <= now;
}

/**
 * Puts `item` unless an unexpired item with its key exists (create-once for records and idempotency
 * reservations; an item past its TTL that DynamoDB has not deleted yet counts as absent). A refused Put
 * answers the item it collided with ({@link writeOrCollide}), undefined when that item is gone or expired
 * (the caller tries again).
 */
export async function putIfAbsent(context: StoreContext, item: Item, now: number): Promise<WriteOutcome> {
  const key = { [A.partitionKey]: item[A.partitionKey], [A.sortKey]: item[A.sortKey] };
  const outcome = await writeOrCollide(context, 'PutItem', key, () =>
    context.client.put({
      TableName: context.tableName,
      Item: item,
      ConditionExpression: 'attribute_not_exists(#pk) OR #expiresAt <= :nowSeconds',
      ExpressionAttributeNames: { '#pk': A.partitionKey, '#expiresAt': A.expiresAt },
      ExpressionAttributeValues: { ':nowSeconds': now },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    }),
  );
  return outcome.applied || outcome.existing === undefined || !isExpired(outcome.existing, now)
    ? outcome
    : { applied: false, existing: undefined };
}
