/**
 * The store's item operations over the SDK's DynamoDB client against a real DynamoDB API (dynalite over
 * HTTP): every operation the store makes, with plain items in and out, and DynamoDB's own errors.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ItemClient } from '../../../lib/store/index.js';
import { type Dynalite, startDynalite } from '../../helpers/dynalite.js';

let db: Dynalite;
let client: ItemClient;
let table: string;

beforeAll(async () => {
  db = await startDynalite();
  client = db.itemClient;
  table = db.tableName;
});
afterAll(() => db.close());

const key = (id: string) => ({ pk: `APP#test://${id}`, sk: 'A' });

describe('ItemClient against dynalite', () => {
  it('puts, gets, updates and deletes an item with plain values, nested ones included', async () => {
    const item = { ...key('crud'), state: 'RUNNING', version: 1, roles: [{ name: 'trainer', replicas: 2 }] };
    await client.put({ TableName: table, Item: item });
    expect((await client.get({ TableName: table, Key: key('crud'), ConsistentRead: true })).Item).toEqual(
      item,
    );
    const updated = await client.update({
      TableName: table,
      Key: key('crud'),
      UpdateExpression: 'SET #state = :state, #version = #version + :one',
      ConditionExpression: '#version = :version',
      ExpressionAttributeNames: { '#state': 'state', '#version': 'version' },
      ExpressionAttributeValues: { ':state': 'SUCCEEDED', ':one': 1, ':version': 1 },
      ReturnValues: 'ALL_NEW',
    });
    expect(updated.Attributes).toMatchObject({ state: 'SUCCEEDED', version: 2 });
    const deleted = await client.delete({ TableName: table, Key: key('crud'), ReturnValues: 'ALL_OLD' });
    expect(deleted.Attributes).toMatchObject({ state: 'SUCCEEDED' });
    expect((await client.get({ TableName: table, Key: key('crud') })).Item).toBeUndefined();
  });

  it('throws ConditionalCheckFailedException for a failed condition and writes nothing', async () => {
    await client.put({ TableName: table, Item: { ...key('cond'), version: 3 } });
    const error = await client
      .update({
        TableName: table,
        Key: key('cond'),
        UpdateExpression: 'SET #version = :next',
        ConditionExpression: '#version = :expected',
        ExpressionAttributeNames: { '#version': 'version' },
        ExpressionAttributeValues: { ':next': 9, ':expected': 2 },
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConditionalCheckFailedException);
    expect(error).toMatchObject({
      name: 'ConditionalCheckFailedException',
      $fault: 'client',
      $metadata: { httpStatusCode: 400 },
    });
    expect((await client.get({ TableName: table, Key: key('cond') })).Item?.version).toBe(3);
  });

  it('pages a Query with Limit and ExclusiveStartKey', async () => {
    for (let i = 0; i < 5; i++) {
      await client.put({ TableName: table, Item: { pk: 'PAGE', sk: `S${i}`, i } });
    }
    const seen: number[] = [];
    let startKey: Record<string, unknown> | undefined;
    let pages = 0;
    do {
      const page = await client.query({
        TableName: table,
        KeyConditionExpression: '#pk = :pk',
        ExpressionAttributeNames: { '#pk': 'pk' },
        ExpressionAttributeValues: { ':pk': 'PAGE' },
        Limit: 2,
        ...(startKey ? { ExclusiveStartKey: startKey } : {}),
      });
      pages += 1;
      seen.push(...(page.Items ?? []).map((item) => item.i as number));
      startKey = page.LastEvaluatedKey;
    } while (startKey !== undefined);
    expect(seen).toEqual([0, 1, 2, 3, 4]);
    expect(pages).toBe(3);
  });

  it("reports a missing table with DynamoDB's ResourceNotFoundException", async () => {
    await expect(client.get({ TableName: 'no-such-table', Key: key('x') })).rejects.toMatchObject({
      name: 'ResourceNotFoundException',
      $metadata: { httpStatusCode: 400, attempts: 1 },
    });
  });

  it("reports DynamoDB's validation errors with its message", async () => {
    await expect(
      client.update({ TableName: table, Key: key('v'), UpdateExpression: 'SET = broken' }),
    ).rejects.toMatchObject({
      name: 'ValidationException',
      message: expect.stringContaining('Invalid UpdateExpression'),
    });
  });
});
