import { createServer as createHttpServer } from 'node:http';
import { type AddressInfo, createServer } from 'node:net';
import { DynamoDBClient, DynamoDBServiceException } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { ConfiguredRetryStrategy } from '@smithy/core/retry';
import { type HttpRequest, HttpResponse } from '@smithy/protocol-http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bodyText } from '../../../lib/local/embedded-dynamodb.js';
import { ValidationError } from '../../../lib/specs/index.js';
import {
  DYNAMODB_REQUEST_LIMITS,
  DynamoAppRecordStore,
  newDynamoDbClient,
  StoreConflictError,
  StoreError,
  StoreTableNotFoundError,
  StoreUnavailableError,
  toStoreError,
} from '../../../lib/store/index.js';
import { type Dynalite, startDynalite } from '../../helpers/dynalite.js';
import { event, T0 } from './fixtures.js';

let db: Dynalite;

beforeAll(async () => {
  db = await startDynalite();
});
afterAll(() => db.close());

/** A local port with nothing listening on it. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return typeof address === 'object' && address ? address.port : 1;
}

describe('DynamoAppRecordStore errors', () => {
  it('says the table does not exist when it is missing', async () => {
    const store = new DynamoAppRecordStore({ tableName: 'no-such-table', client: db.client });
    const error = await store.records.get('aws_batch://torchx/q:x').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreTableNotFoundError);
    expect((error as StoreError).retryable).toBe(false);
    expect((error as Error).message).toContain("'no-such-table' does not exist");
  });

  it('reports an unreachable endpoint as retryable StoreUnavailableError', async () => {
    const client = new DynamoDBClient({
      endpoint: `http://127.0.0.1:${await closedPort()}`,
      region: 'us-east-1',
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
      maxAttempts: 1,
    });
    const store = new DynamoAppRecordStore({ tableName: db.tableName, client });
    const error = await store.records.get('aws_batch://torchx/q:x').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as StoreError).retryable).toBe(true);
    expect((error as StoreError).code).toBe('StoreUnavailable');
    expect((error as Error).cause).toMatchObject({ code: 'ECONNREFUSED' });
  });

  it.each([
    ['an invalid store option', { retentionDays: 0 }, 'retentionDays'],
    ['an empty table name', { tableName: '' }, 'tableName'],
    ['a zero attempt budget', { maxTransitionAttempts: 0 }, 'maxTransitionAttempts'],
  ])('rejects %s at construction', (_what, options, path) => {
    expect(() => new DynamoAppRecordStore({ tableName: 't-1', client: db.client, ...options })).toThrow(
      ValidationError,
    );
    try {
      new DynamoAppRecordStore({ tableName: 't-1', client: db.client, ...options });
    } catch (error) {
      expect((error as ValidationError).issues.map((issue) => issue.path)).toEqual([path]);
    }
  });
});

/** A DynamoDB error body, as DynamoDB sends it. */
function errorBody(type: string, message: string): string {
  return JSON.stringify({ __type: `com.amazonaws.dynamodb.v20120810#${type}`, message });
}

/**
 * An SDK client whose request handler serves each request with `answer` (operation, wire input) → status and
 * body; the SDK's serializers, retries (three attempts, no waits) and error parsing all run.
 */
function wireClient(
  answer: (operation: string, input: Record<string, unknown>) => { status: number; body: string },
) {
  const sent: { operation: string; input: Record<string, unknown> }[] = [];
  const requestHandler = {
    async handle(request: HttpRequest) {
      const operation = (request.headers['x-amz-target'] ?? '').split('.')[1] ?? '';
      const input = JSON.parse(bodyText(request.body)) as Record<string, unknown>;
      sent.push({ operation, input });
      const { status, body } = answer(operation, input);
      const headers = {
        'content-type': 'application/x-amz-json-1.0',
        'x-amzn-requestid': `req-${sent.length}`,
      };
      return { response: new HttpResponse({ statusCode: status, headers, body: Buffer.from(body) }) };
    },
    updateHttpClientConfig() {},
    httpHandlerConfigs() {
      return {};
    },
  };
  const client = new DynamoDBClient({
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    requestHandler,
    retryStrategy: new ConfiguredRetryStrategy(3, () => 0),
  });
  return { client, sent };
}

describe('DynamoAppRecordStore errors at the DynamoDB wire', () => {
  it('reports throttling that outlasted the retries as StoreUnavailableError', async () => {
    const { client, sent } = wireClient(() => ({
      status: 400,
      body: errorBody('ProvisionedThroughputExceededException', 'Rate exceeded'),
    }));
    const store = new DynamoAppRecordStore({ tableName: 'apps', client });
    const error = await store.records.get('aws_batch://torchx/q:x').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as Error).message).toContain('ProvisionedThroughputExceededException: Rate exceeded');
    expect((error as Error).cause).toBeInstanceOf(DynamoDBServiceException);
    expect((error as Error).cause).toMatchObject({ $metadata: { attempts: 3, requestId: 'req-3' } });
    expect(sent.map((call) => call.operation)).toEqual(['GetItem', 'GetItem', 'GetItem']);
  });

  it('gives up with StoreConflictError after losing every race, having written nothing', async () => {
    const item = {
      pk: 'APP#aws_batch://torchx/q:x',
      sk: 'A',
      handle: 'aws_batch://torchx/q:x',
      state: 'PENDING',
      stateRank: 2,
      attempt: 0,
      lastEventTime: T0,
      history: [],
      version: 4,
    };
    const { client, sent } = wireClient((operation) =>
      operation === 'GetItem'
        ? { status: 200, body: JSON.stringify({ Item: marshall(item) }) }
        : {
            status: 400,
            body: errorBody('ConditionalCheckFailedException', 'The conditional request failed'),
          },
    );
    const store = new DynamoAppRecordStore({ tableName: 'apps', client, maxTransitionAttempts: 3 });
    await expect(store.records.transition(item.handle, event('RUNNING', 0, T0 + 1))).rejects.toBeInstanceOf(
      StoreConflictError,
    );
    const updates = sent.filter((call) => call.operation === 'UpdateItem');
    // A failed condition is an answer, not a fault: each attempt of the transition sends one UpdateItem.
    expect(updates).toHaveLength(3);
    expect(updates[0]?.input).toMatchObject({
      ConditionExpression: expect.stringMatching(/^#version = :version AND attribute_exists\(#pk\)/),
      ExpressionAttributeValues: expect.objectContaining({
        ':version': { N: '4' },
        ':nextVersion': { N: '5' },
      }),
    });
  });

  it('wraps other DynamoDB errors in a non-retryable StoreError', () => {
    const cause = Object.assign(new Error('One or more parameter values were invalid'), {
      name: 'ValidationException',
      $metadata: { httpStatusCode: 400 },
    });
    const error = toStoreError(cause, 'PutItem', 'apps');
    expect(error).toBeInstanceOf(StoreError);
    expect(error).not.toBeInstanceOf(StoreUnavailableError);
    expect(error.message).toBe(
      "DynamoDB PutItem on 'apps' failed (ValidationException: One or more parameter values were invalid)",
    );
  });

  it('says which permission to grant when DynamoDB denies the call, and does not call it retryable', async () => {
    const { client, sent } = wireClient(() => ({
      status: 400,
      body: errorBody(
        'AccessDeniedException',
        'User: arn:aws:sts::123456789012:assumed-role/run/x is not authorized to perform: dynamodb:GetItem',
      ),
    }));
    const store = new DynamoAppRecordStore({ tableName: 'apps', client });
    const error = await store.records.get('aws_batch://torchx/q:x').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect(error).not.toBeInstanceOf(StoreUnavailableError);
    expect((error as Error).message).toContain("DynamoDB denied GetItem on 'apps'");
    expect((error as Error).message).toContain('Grant dynamodb:GetItem on the table');
    expect(sent).toHaveLength(1);
  });

  it('passes project errors through unchanged', () => {
    const original = ValidationError.forField('app', 'too large');
    expect(toStoreError(original, 'PutItem', 'apps')).toBe(original);
  });

  it('treats 5xx responses as retryable', () => {
    const cause = Object.assign(new Error('boom'), {
      name: 'InternalServerError',
      $metadata: { httpStatusCode: 500 },
    });
    expect(toStoreError(cause, 'Query', 'apps')).toBeInstanceOf(StoreUnavailableError);
  });
});

describe('DynamoAppRecordStore errors of requests that got no answer', () => {
  it('reports a connection dropped mid-response, once the SDK has retried it, as StoreUnavailableError', async () => {
    let requests = 0;
    const dropping = createHttpServer((_request, response) => {
      requests += 1;
      response.writeHead(200, { 'content-type': 'application/x-amz-json-1.0', 'content-length': '100' });
      response.write('{"Item":');
      setImmediate(() => response.socket?.destroy());
    });
    await new Promise<void>((resolve) => dropping.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = dropping.address() as AddressInfo;
      const client = new DynamoDBClient({
        endpoint: `http://127.0.0.1:${port}`,
        region: 'us-east-1',
        credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
        retryStrategy: new ConfiguredRetryStrategy(3, () => 0),
      });
      const store = new DynamoAppRecordStore({ tableName: 'apps', client });
      const error = await store.records.get('aws_batch://torchx/q:x').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StoreUnavailableError);
      expect(requests).toBe(3);
    } finally {
      dropping.closeAllConnections();
      await new Promise((resolve) => dropping.close(resolve));
    }
  });

  it('times a request out when no answer comes, and reports it as StoreUnavailableError', async () => {
    const silent = createHttpServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = silent.address() as AddressInfo;
      const quick = newDynamoDbClient({
        endpoint: `http://127.0.0.1:${port}`,
        region: 'us-east-1',
        credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
        requestHandler: { ...DYNAMODB_REQUEST_LIMITS, requestTimeout: 50 },
        maxAttempts: 1,
      });
      const store = new DynamoAppRecordStore({ tableName: 'apps', client: quick });
      const error = await store.records.get('aws_batch://torchx/q:x').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StoreUnavailableError);
      expect((error as Error).cause).toMatchObject({ name: 'TimeoutError' });
    } finally {
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});
