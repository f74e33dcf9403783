/**
 * The store's five item operations (GetItem, PutItem, UpdateItem, DeleteItem, Query) over the AWS SDK's
 * `DynamoDBClient`, with plain JavaScript items in and out: keys, items and expression values are marshalled
 * by the SDK's own `@aws-sdk/util-dynamodb` (attributes set to `undefined` left out). Credentials, endpoints,
 * retries, checksums and signing are the SDK client's; this module only converts items.
 *
 * @module
 */
import {
  DeleteItemCommand,
  type DeleteItemCommandInput,
  type DeleteItemCommandOutput,
  DynamoDBClient,
  type DynamoDBClientConfig,
  GetItemCommand,
  type GetItemCommandInput,
  type GetItemCommandOutput,
  PutItemCommand,
  type PutItemCommandInput,
  type PutItemCommandOutput,
  QueryCommand,
  type QueryCommandInput,
  type QueryCommandOutput,
  UpdateItemCommand,
  type UpdateItemCommandInput,
  type UpdateItemCommandOutput,
} from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';

/** An item as the store reads and writes it: attribute names to JavaScript values. */
export type Item = Record<string, unknown>;

/** Expression values as plain values (`{ ':state': 'RUNNING' }`). */
interface PlainValues {
  ExpressionAttributeValues?: Item;
}

/** GetItem's input, with `Key` as a plain item. */
export type GetItemInput = Omit<GetItemCommandInput, 'Key'> & { Key: Item };
/** PutItem's input, with `Item` and the expression values as plain values. */
export type PutItemInput = Omit<PutItemCommandInput, 'Item' | 'ExpressionAttributeValues'> &
  PlainValues & { Item: Item };
/** UpdateItem's input, with `Key` and the expression values as plain values. */
export type UpdateItemInput = Omit<UpdateItemCommandInput, 'Key' | 'ExpressionAttributeValues'> &
  PlainValues & { Key: Item };
/** DeleteItem's input, with `Key` and the expression values as plain values. */
export type DeleteItemInput = Omit<DeleteItemCommandInput, 'Key' | 'ExpressionAttributeValues'> &
  PlainValues & { Key: Item };
/** Query's input, with `ExclusiveStartKey` and the expression values as plain values. */
export type QueryInput = Omit<QueryCommandInput, 'ExclusiveStartKey' | 'ExpressionAttributeValues'> &
  PlainValues & { ExclusiveStartKey?: Item };

/** GetItem's output, with `Item` as a plain item. */
export type GetItemOutput = Omit<GetItemCommandOutput, 'Item'> & { Item?: Item };
/** A write's output, with `Attributes` (asked for with `ReturnValues`) as a plain item. */
export type WriteItemOutput = Omit<PutItemCommandOutput | UpdateItemCommandOutput, 'Attributes'> & {
  Attributes?: Item;
};
/** Query's output, with `Items` and `LastEvaluatedKey` as plain items. */
export type QueryOutput = Omit<QueryCommandOutput, 'Items' | 'LastEvaluatedKey'> & {
  Items?: Item[];
  LastEvaluatedKey?: Item;
};

function wire(item: Item): NonNullable<GetItemCommandInput['Key']> {
  return marshall(item, { removeUndefinedValues: true });
}

function plain(item: Parameters<typeof unmarshall>[0]): Item {
  return unmarshall(item);
}

/** Expression values marshalled, when there are any. */
function values(given: Item | undefined): Pick<QueryCommandInput, 'ExpressionAttributeValues'> {
  return given === undefined ? {} : { ExpressionAttributeValues: wire(given) };
}

/** A write's output with its `Attributes` unmarshalled. */
function written(output: PutItemCommandOutput | UpdateItemCommandOutput | DeleteItemCommandOutput) {
  const { Attributes, ...rest } = output;
  return { ...rest, ...(Attributes ? { Attributes: plain(Attributes) } : {}) } as WriteItemOutput;
}

/**
 * The item a conditional write collided with, from a `ConditionalCheckFailedException` of a write sent with
 * `ReturnValuesOnConditionCheckFailure: 'ALL_OLD'`, unmarshalled; undefined when the error carries none (no
 * item under the key, or an emulator that ignores the parameter).
 */
export function collidedItem(error: unknown): Item | undefined {
  const item = (error as { Item?: unknown } | null)?.Item;
  return item !== null && typeof item === 'object'
    ? plain(item as Parameters<typeof unmarshall>[0])
    : undefined;
}

/**
 * Time limits on each DynamoDB request of the store's default client (the SDK sets none): 3 s to connect,
 * 15 s for the answer, which then fails with a `TimeoutError` the SDK retries, instead of holding a function
 * until its own timeout. A retried write that had been applied fails its condition: every store write is
 * conditional, so nothing is applied twice.
 */
export const DYNAMODB_REQUEST_LIMITS = {
  connectionTimeout: 3_000,
  requestTimeout: 15_000,
  throwOnRequestTimeout: true,
} as const;

/**
 * The SDK client the store builds when none is given: region, credentials and endpoint
 * (`AWS_ENDPOINT_URL_DYNAMODB` included) from the environment as the SDK resolves them, with
 * {@link DYNAMODB_REQUEST_LIMITS}; `config` overrides any of it.
 */
export function newDynamoDbClient(config: DynamoDBClientConfig = {}): DynamoDBClient {
  return new DynamoDBClient({ requestHandler: DYNAMODB_REQUEST_LIMITS, ...config });
}

/**
 * Item operations with plain items over an SDK `DynamoDBClient` (see the module's description). Errors are
 * the SDK's (`ConditionalCheckFailedException`, `ResourceNotFoundException`, …).
 *
 * @example
 * ```ts
 * const items = new ItemClient(new DynamoDBClient({}));
 * const { Item } = await items.get({ TableName: 'txs-apps', Key: { pk: 'APP#…', sk: 'A' } });
 * ```
 */
export class ItemClient {
  /** @param dynamodb - the SDK client every call is sent with. */
  constructor(readonly dynamodb: DynamoDBClient) {}

  /** GetItem. */
  async get(input: GetItemInput): Promise<GetItemOutput> {
    const { Item, ...rest } = await this.dynamodb.send(
      new GetItemCommand({ ...input, Key: wire(input.Key) }),
    );
    return { ...rest, ...(Item ? { Item: plain(Item) } : {}) };
  }

  /** PutItem. */
  async put(input: PutItemInput): Promise<WriteItemOutput> {
    const { Item, ExpressionAttributeValues, ...rest } = input;
    const command = new PutItemCommand({ ...rest, Item: wire(Item), ...values(ExpressionAttributeValues) });
    return written(await this.dynamodb.send(command));
  }

  /** UpdateItem. */
  async update(input: UpdateItemInput): Promise<WriteItemOutput> {
    const { Key, ExpressionAttributeValues, ...rest } = input;
    const command = new UpdateItemCommand({ ...rest, Key: wire(Key), ...values(ExpressionAttributeValues) });
    return written(await this.dynamodb.send(command));
  }

  /** DeleteItem. */
  async delete(input: DeleteItemInput): Promise<WriteItemOutput> {
    const { Key, ExpressionAttributeValues, ...rest } = input;
    const command = new DeleteItemCommand({ ...rest, Key: wire(Key), ...values(ExpressionAttributeValues) });
    return written(await this.dynamodb.send(command));
  }

  /** One page of a Query. */
  async query(input: QueryInput): Promise<QueryOutput> {
    const { ExclusiveStartKey, ExpressionAttributeValues, ...rest } = input;
    const { Items, LastEvaluatedKey, ...output } = await this.dynamodb.send(
      new QueryCommand({
        ...rest,
        ...values(ExpressionAttributeValues),
        ...(ExclusiveStartKey ? { ExclusiveStartKey: wire(ExclusiveStartKey) } : {}),
      }),
    );
    return {
      ...output,
      ...(Items ? { Items: Items.map(plain) } : {}),
      ...(LastEvaluatedKey ? { LastEvaluatedKey: plain(LastEvaluatedKey) } : {}),
    };
  }
}
