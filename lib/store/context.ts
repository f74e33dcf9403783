/**
 * What the parts of {@link DynamoAppRecordStore} share: the document client, the table, the clock, the
 * retention settings and the one place SDK errors become store errors (`call`). Records, queries and
 * idempotency reservations are separate modules over one context, as Powertools splits its idempotency
 * package into a handler, a persistence base and a DynamoDB layer.
 *
 * @module
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { isConditionalCheckFailed, toStoreError } from './errors.js';
import { TABLE_ATTRIBUTES as A } from './table.js';

/** An item as the document client reads and writes it. */
export type Item = Record<string, unknown>;

/** The shared state of the store's parts. */
export interface StoreContext {
  /** The app record table. */
  readonly tableName: string;
  /** The document client every call goes through. */
  readonly client: DynamoDBDocumentClient;
  /** Seconds a terminal record is kept before TTL deletes it. */
  readonly retentionSeconds: number;
  /** Seconds an idempotency reservation is kept. */
  readonly idempotencyTtlSeconds: number;
  /** Clock (epoch ms). */
  readonly now: () => number;
  /** Attempts of a transition that keeps losing races before it gives up. */
  readonly maxTransitionAttempts: number;
}

let sharedDocumentClient: DynamoDBDocumentClient | undefined;

/** The document client the store works through, over `client` (attributes set to undefined are left out). */
export function documentClientOf(client: DynamoDBClient): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
}

/** The default document client, built once per process. */
export function defaultDocumentClient(): DynamoDBDocumentClient {
  sharedDocumentClient ??= documentClientOf(new DynamoDBClient({}));
  return sharedDocumentClient;
}

/** The context's clock in whole seconds (TTL attributes are epoch seconds). */
export function nowSeconds(context: StoreContext): number {
  return Math.floor(context.now() / 1000);
}

/** Runs one SDK call, turning SDK errors other than a failed condition into store errors. */
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
 * const applied = await conditionalWrite(context, 'DeleteItem', () => context.client.send(deleteCommand));
 * ```
 */
export async function conditionalWrite(
  context: StoreContext,
  operation: string,
  write: () => Promise<unknown>,
): Promise<boolean> {
  try {
    await call(context, operation, write);
    return true;
  } catch (error) {
    if (isConditionalCheckFailed(error)) return false;
    throw error;
  }
}

/**
 * Puts `item` unless an unexpired item with its key exists (create-once for records and idempotency
 * reservations; an item past its TTL that DynamoDB has not deleted yet counts as absent).
 *
 * @returns false when the condition failed (the item exists).
 */
export async function putIfAbsent(context: StoreContext, item: Item, now: number): Promise<boolean> {
  return conditionalWrite(context, 'PutItem', () =>
    context.client.send(
      new PutCommand({
        TableName: context.tableName,
        Item: item,
        ConditionExpression: 'attribute_not_exists(#pk) OR #expiresAt <= :nowSeconds',
        ExpressionAttributeNames: { '#pk': A.partitionKey, '#expiresAt': A.expiresAt },
        ExpressionAttributeValues: { ':nowSeconds': now },
      }),
    ),
  );
}
