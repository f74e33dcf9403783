/**
 * The store's DynamoDB client against a real DynamoDB API (dynalite over HTTP): every operation the store
 * makes, DynamoDB's own errors, and the HTTP transport's connection handling and timeouts.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDbServiceError, httpTransport, ItemClient } from '../../../lib/store/index.js';
import { type Dynalite, startDynalite } from '../../helpers/dynalite.js';

let db: Dynalite;
let client: ItemClient;
let table: string;
/** Sockets dynalite accepted, to see connections reused. */
let connections = 0;

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
    expect(error).toBeInstanceOf(DynamoDbServiceError);
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
      seen.push(...page.Items.map((item) => item.i as number));
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

  it('reuses one kept-alive connection for sequential calls', async () => {
    const proxy = await tcpCounter(db.endpoint);
    try {
      const counted = new ItemClient({
        endpoint: proxy.url,
        region: 'us-east-1',
        credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
      });
      for (let i = 0; i < 5; i++) await counted.get({ TableName: table, Key: key('keepalive') });
      expect(connections).toBe(1);
    } finally {
      await proxy.close();
    }
  });
});

describe('httpTransport', () => {
  it('times a request out when no response comes, as a retryable TimeoutError', async () => {
    const silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = silent.address() as AddressInfo;
      const slow = new ItemClient({
        endpoint: `http://127.0.0.1:${port}`,
        region: 'us-east-1',
        credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
        transport: httpTransport({ requestTimeoutMs: 50 }),
        maxAttempts: 2,
        sleep: async () => {},
      });
      const error = await slow.get({ TableName: table, Key: key('t') }).catch((e: unknown) => e);
      expect(error).toMatchObject({ name: 'TimeoutError', code: 'ETIMEDOUT', $metadata: { attempts: 2 } });
      expect((error as Error).message).toMatch(/no response from 127\.0\.0\.1:\d+ within 50 ms/);
    } finally {
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});

describe('httpTransport, a connection dropped mid-response', () => {
  it('fails the request with the connection error (retried as a network failure), not a timeout', async () => {
    let requests = 0;
    const dropping = createServer((_request, response) => {
      requests += 1;
      response.writeHead(200, { 'content-type': 'application/x-amz-json-1.0', 'content-length': '100' });
      response.write('{"Item":');
      setImmediate(() => response.socket?.destroy());
    });
    await new Promise<void>((resolve) => dropping.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = dropping.address() as AddressInfo;
      const cut = new ItemClient({
        endpoint: `http://127.0.0.1:${port}`,
        region: 'us-east-1',
        credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
        transport: httpTransport({ requestTimeoutMs: 60_000 }),
        sleep: async () => {},
      });
      const error = await cut.get({ TableName: table, Key: key('cut') }).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'ECONNRESET', $fault: 'server', $metadata: { attempts: 3 } });
      expect(requests).toBe(3);
    } finally {
      dropping.closeAllConnections();
      await new Promise((resolve) => dropping.close(resolve));
    }
  });
});

/** A counting HTTP relay in front of `target`: counts the connections clients open to it. */
async function tcpCounter(target: string): Promise<{ url: string; close(): Promise<void> }> {
  connections = 0;
  const upstream = new URL(target);
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', async () => {
      const answer = await fetch(upstream, {
        method: 'POST',
        headers: request.headers as Record<string, string>,
        body: Buffer.concat(chunks),
      });
      response.writeHead(answer.status, Object.fromEntries(answer.headers));
      response.end(Buffer.from(await answer.arrayBuffer()));
    });
  });
  server.on('connection', (_socket: Socket) => {
    connections += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
