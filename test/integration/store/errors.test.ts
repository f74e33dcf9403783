import { createServer } from 'node:net';
import {
  ConditionalCheckFailedException,
  DynamoDBClient,
  ProvisionedThroughputExceededException,
} from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ValidationError } from '../../../lib/specs/index.js';
import {
  DynamoAppRecordStore,
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
    const store = new DynamoAppRecordStore({ tableName: 'no-such-table', documentClient: db.documentClient });
    const error = await store.get('aws_batch://torchx/q:x').catch((e: unknown) => e);
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
    const store = new DynamoAppRecordStore({
      tableName: db.tableName,
      documentClient: DynamoDBDocumentClient.from(client),
    });
    try {
      const error = await store.get('aws_batch://torchx/q:x').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StoreUnavailableError);
      expect((error as StoreError).retryable).toBe(true);
      expect((error as StoreError).code).toBe('StoreUnavailable');
    } finally {
      client.destroy();
    }
  });

  it.each([
    ['an invalid store option', { retentionDays: 0 }, 'retentionDays'],
    ['an empty table name', { tableName: '' }, 'tableName'],
    ['a zero attempt budget', { maxTransitionAttempts: 0 }, 'maxTransitionAttempts'],
  ])('rejects %s at construction', (_what, options, path) => {
    expect(
      () => new DynamoAppRecordStore({ tableName: 't-1', documentClient: db.documentClient, ...options }),
    ).toThrow(ValidationError);
    try {
      new DynamoAppRecordStore({ tableName: 't-1', documentClient: db.documentClient, ...options });
    } catch (error) {
      expect((error as ValidationError).issues.map((issue) => issue.path)).toEqual([path]);
    }
  });
});

describe('DynamoAppRecordStore errors at the SDK wire', () => {
  const documentClient = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1' }));
  const wire = mockClient(documentClient);
  afterEach(() => wire.reset());

  it('reports throttling that outlasted the SDK retries as StoreUnavailableError', async () => {
    wire.on(GetCommand).rejects(
      new ProvisionedThroughputExceededException({
        message: 'Rate exceeded',
        $metadata: { httpStatusCode: 400 },
      }),
    );
    const store = new DynamoAppRecordStore({ tableName: 'apps', documentClient });
    const error = await store.get('aws_batch://torchx/q:x').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as Error).message).toContain('ProvisionedThroughputExceededException');
    expect((error as Error).cause).toBeInstanceOf(ProvisionedThroughputExceededException);
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
    wire.on(GetCommand).resolves({ Item: item });
    wire
      .on(UpdateCommand)
      .rejects(
        new ConditionalCheckFailedException({ message: 'The conditional request failed', $metadata: {} }),
      );
    const store = new DynamoAppRecordStore({ tableName: 'apps', documentClient, maxTransitionAttempts: 3 });
    await expect(store.transition(item.handle, event('RUNNING', 0, T0 + 1))).rejects.toBeInstanceOf(
      StoreConflictError,
    );
    expect(wire.commandCalls(UpdateCommand)).toHaveLength(3);
    expect(wire.commandCalls(UpdateCommand)[0]?.args[0].input).toMatchObject({
      ConditionExpression: expect.stringMatching(/^#version = :version AND attribute_exists\(#pk\)/),
      ExpressionAttributeValues: expect.objectContaining({ ':version': 4, ':nextVersion': 5 }),
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
