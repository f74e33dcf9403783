/**
 * A refused conditional write answers the item it collided with: the store sends its create-once Puts and its
 * idempotency completion with `ReturnValuesOnConditionCheckFailure: ALL_OLD` and reads nothing more when
 * DynamoDB answers the item. dynalite ignores the parameter, so the DynamoDB behaviour is played at the SDK
 * wire: a request handler serves each request from dynalite and, as DynamoDB does, puts the colliding item into
 * the `ConditionalCheckFailedException` it answers. Against plain dynalite the store falls back to one read.
 */
import {
  type AttributeValue,
  ConditionalCheckFailedException,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { type HttpRequest, HttpResponse } from '@smithy/protocol-http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bodyText } from '../../../lib/local/embedded-dynamodb.js';
import {
  TABLE_ATTRIBUTES as A,
  appPartitionKey,
  collidedItem,
  IdempotencyReservationError,
} from '../../../lib/store/index.js';
import { type Dynalite, sentCommands, startDynalite } from '../../helpers/dynalite.js';
import { event, makeStore, newRecord, T0 } from './fixtures.js';

let db: Dynalite;
beforeAll(async () => {
  db = await startDynalite();
});
afterAll(() => db.close());

type WireInput = Record<string, unknown> & { ReturnValuesOnConditionCheckFailure?: string };

/** The key of the item a PutItem or UpdateItem addresses, in wire form. */
function keyOf(operation: string, input: WireInput): Record<string, AttributeValue> {
  const source = (operation === 'PutItem' ? input.Item : input.Key) as Record<string, AttributeValue>;
  const [pk, sk] = [source[A.partitionKey], source[A.sortKey]];
  if (pk === undefined || sk === undefined) throw new Error(`${operation} without a key`);
  return { [A.partitionKey]: pk, [A.sortKey]: sk };
}

/** dynalite's answer to one wire request (the parameter it does not know left out). */
async function fromDynalite(operation: string, input: WireInput): Promise<object> {
  const send = (command: PutItemCommand | UpdateItemCommand | GetItemCommand) =>
    db.client.send(command as PutItemCommand);
  if (operation === 'PutItem') return send(new PutItemCommand(input as never));
  if (operation === 'UpdateItem') return send(new UpdateItemCommand(input as never));
  if (operation === 'GetItem') return send(new GetItemCommand(input as never));
  throw new Error(`unexpected ${operation}`);
}

/** Sends one wire request to dynalite, answering a failed condition as DynamoDB does under ALL_OLD. */
async function asDynamoDb(operation: string, input: WireInput): Promise<{ status: number; body: object }> {
  const { ReturnValuesOnConditionCheckFailure: returnValues, ...rest } = input;
  try {
    const { $metadata: _, ...output } = (await fromDynalite(operation, rest)) as { $metadata: unknown };
    return { status: 200, body: output };
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    const { Item } =
      returnValues === 'ALL_OLD'
        ? await db.client.send(
            new GetItemCommand({
              TableName: rest.TableName as string,
              Key: keyOf(operation, input),
              ConsistentRead: true,
            }),
          )
        : { Item: undefined };
    const type = 'com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException';
    return {
      status: 400,
      body: { __type: type, message: 'The conditional request failed', ...(Item ? { Item } : {}) },
    };
  }
}

/** An SDK client whose requests dynalite serves with DynamoDB's ALL_OLD answers; `sent` lists the operations. */
function dynamoDbLikeClient(): { client: DynamoDBClient; sent: string[] } {
  const sent: string[] = [];
  const requestHandler = {
    async handle(request: HttpRequest) {
      const operation = (request.headers['x-amz-target'] ?? '').split('.')[1] ?? '';
      const input = JSON.parse(bodyText(request.body)) as WireInput;
      sent.push(operation);
      const { status, body } = await asDynamoDb(operation, input);
      const headers = {
        'content-type': 'application/x-amz-json-1.0',
        'x-amzn-requestid': `req-${sent.length}`,
      };
      return {
        response: new HttpResponse({ statusCode: status, headers, body: Buffer.from(JSON.stringify(body)) }),
      };
    },
    updateHttpClientConfig() {},
    httpHandlerConfigs() {
      return {};
    },
  };
  const client = new DynamoDBClient({
    region: 'us-east-1',
    endpoint: 'http://dynamodb.invalid',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    requestHandler,
  });
  return { client, sent };
}

describe('a refused conditional write, with DynamoDB answering the item it collided with', () => {
  it('the SDK error carries the colliding item', async () => {
    const { client } = dynamoDbLikeClient();
    const { store } = makeStore(client, db.tableName);
    const record = newRecord();
    await store.records.create(record);
    const error = await client
      .send(
        new PutItemCommand({
          TableName: db.tableName,
          Item: { [A.partitionKey]: { S: appPartitionKey(record.handle) }, [A.sortKey]: { S: 'A' } },
          ConditionExpression: 'attribute_not_exists(#pk)',
          ExpressionAttributeNames: { '#pk': A.partitionKey },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      )
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConditionalCheckFailedException);
    expect(collidedItem(error)).toMatchObject({ handle: record.handle, state: record.state, version: 1 });
  });

  it('returns an existing record from the refused Put, reading nothing', async () => {
    const { client, sent } = dynamoDbLikeClient();
    const { store } = makeStore(client, db.tableName);
    const record = newRecord();
    await store.records.create(record);
    sent.length = 0;
    const again = await store.records.create({ ...record, createdAt: record.createdAt + 5 });
    expect(again.created).toBe(false);
    expect(again.record.handle).toBe(record.handle);
    expect(again.record.createdAt).toBe(record.createdAt);
    expect(sent).toEqual(['PutItem']);
  });

  it('decides a transition again from the item its refused UpdateItem collided with, reading nothing', async () => {
    const { client, sent } = dynamoDbLikeClient();
    const { store } = makeStore(client, db.tableName);
    const record = newRecord();
    await store.records.create(record);
    const stale = await store.records.get(record.handle);
    await store.records.transition(record.handle, event('RUNNING', 0, record.createdAt + 10));
    sent.length = 0;
    const outcome = await store.records.transition(
      record.handle,
      event('SUCCEEDED', 0, record.createdAt + 20),
      stale,
    );
    expect(outcome).toMatchObject({ applied: true, previous: 'RUNNING', version: 3 });
    expect(sent).toEqual(['UpdateItem', 'UpdateItem']);
  });

  it('answers a replayed Idempotency-Key with its handle from the refused Put, reading nothing', async () => {
    const { client, sent } = dynamoDbLikeClient();
    const { store } = makeStore(client, db.tableName);
    const handle = newRecord().handle;
    expect(await store.idempotency.reserve('alice', 'replay-1', 'h1', T0 + 60_000)).toEqual({
      reserved: true,
    });
    await store.idempotency.complete('alice', 'replay-1', handle);
    sent.length = 0;
    const replay = await store.idempotency.reserve('alice', 'replay-1', 'h1', T0 + 60_000);
    expect(replay).toMatchObject({ reserved: false, handle, requestHash: 'h1' });
    expect(sent).toEqual(['PutItem']);
  });

  it('names the handle a key is bound to from the refused completion, reading nothing', async () => {
    const { client, sent } = dynamoDbLikeClient();
    const { store } = makeStore(client, db.tableName);
    const [first, second] = [newRecord().handle, newRecord().handle];
    await store.idempotency.reserve('alice', 'bound-1', 'h1', T0 + 60_000);
    await store.idempotency.complete('alice', 'bound-1', first);
    sent.length = 0;
    const error = await store.idempotency.complete('alice', 'bound-1', second).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(IdempotencyReservationError);
    expect((error as Error).message).toContain(`already bound to ${first}`);
    expect(sent).toEqual(['UpdateItem']);
  });
});

describe('a refused conditional write, with an emulator that leaves the item out (dynalite)', () => {
  it('reads the colliding item once and answers the same', async () => {
    const { store } = makeStore(db.client, db.tableName);
    const handle = newRecord().handle;
    await store.idempotency.reserve('bob', 'replay-2', 'h2', T0 + 60_000);
    await store.idempotency.complete('bob', 'replay-2', handle);
    let replay: unknown;
    const sent = await sentCommands(db.client, async () => {
      replay = await store.idempotency.reserve('bob', 'replay-2', 'h2', T0 + 60_000);
    });
    expect(replay).toMatchObject({ reserved: false, handle, requestHash: 'h2' });
    expect(sent.map((c) => c.operation)).toEqual(['PutItem', 'GetItem']);
    expect(sent[0]?.input.ReturnValuesOnConditionCheckFailure).toBe('ALL_OLD');
  });
});
