/**
 * The store's DynamoDB client (the AWS SDK's) signs requests as AWS checks them: a moto of its own with request
 * authentication on (`INITIAL_NO_AUTH_ACTION_COUNT`: after the first requests, moto recomputes every
 * request's SigV4 signature with botocore and evaluates the caller's IAM policies) accepts the client's
 * requests with an IAM user's keys and refuses them with a wrong secret or without the permission.
 */
import type { ChildProcess } from 'node:child_process';
import { CreateTableCommand, DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { type HttpRequest, HttpResponse } from '@smithy/protocol-http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTableInput, DynamoAppRecordStore } from '../../lib/store/index.js';
import { sentCommands } from '../helpers/dynalite.js';
import { newRecord } from '../integration/store/fixtures.js';
import { MOTO_REGION } from './constants.js';
import { iamQuery, startMoto, stopMoto } from './moto-server.js';

let moto: { url: string; child: ChildProcess };
let keys: { accessKeyId: string; secretAccessKey: string };
let readerKeys: { accessKeyId: string; secretAccessKey: string };

/** The requests moto serves before it authenticates: the IAM setup below, one each. */
const SETUP_REQUESTS = 5;
const TABLE = 'txs-signed';

function xmlField(xml: string, name: string): string {
  const value = new RegExp(`<${name}>([^<]+)</${name}>`).exec(xml)?.[1];
  if (value === undefined) throw new Error(`no ${name} in ${xml}`);
  return value;
}

/**
 * The body of the last answer moto sent: it refuses in IAM's XML, which the SDK's JSON-protocol client does
 * not parse (the error it throws keeps the status, not the body).
 */
let lastBody = '';
const http = new NodeHttpHandler();
const recordingHandler = {
  async handle(request: HttpRequest) {
    const { response } = await http.handle(request);
    const chunks: Buffer[] = [];
    for await (const chunk of response.body as AsyncIterable<Buffer>) chunks.push(chunk);
    const body = Buffer.concat(chunks);
    lastBody = body.toString();
    return { response: new HttpResponse({ ...response, body }) };
  },
  updateHttpClientConfig() {},
  httpHandlerConfigs() {
    return {};
  },
};

function clientWith(credentials: { accessKeyId: string; secretAccessKey: string }): DynamoDBClient {
  return new DynamoDBClient({
    endpoint: moto.url,
    region: MOTO_REGION,
    credentials,
    maxAttempts: 1,
    requestHandler: recordingHandler,
  });
}

beforeAll(async () => {
  moto = await startMoto({ INITIAL_NO_AUTH_ACTION_COUNT: String(SETUP_REQUESTS) });
  await iamQuery(moto.url, 'CreateUser', { UserName: 'txs-store' });
  await iamQuery(moto.url, 'CreateUser', { UserName: 'txs-reader' });
  await iamQuery(moto.url, 'PutUserPolicy', {
    UserName: 'txs-store',
    PolicyName: 'dynamodb',
    PolicyDocument: JSON.stringify({
      Version: '2012-10-17',
      Statement: [{ Effect: 'Allow', Action: 'dynamodb:*', Resource: '*' }],
    }),
  });
  const accessKey = async (user: string) => {
    const created = await iamQuery(moto.url, 'CreateAccessKey', { UserName: user });
    return {
      accessKeyId: xmlField(created, 'AccessKeyId'),
      secretAccessKey: xmlField(created, 'SecretAccessKey'),
    };
  };
  keys = await accessKey('txs-store');
  readerKeys = await accessKey('txs-reader');
});
afterAll(async () => {
  http.destroy();
  if (moto) await stopMoto(moto.child);
});

describe('DynamoDB client signatures checked by moto (botocore SigV4, IAM policies)', () => {
  it("creates the app record table and runs the store's operations with an IAM user's keys", async () => {
    const client = clientWith(keys);
    await client.send(new CreateTableCommand(createTableInput(TABLE)));
    const store = new DynamoAppRecordStore({ tableName: TABLE, client });
    const owner = 'arn:aws:iam::123456789012:user/txs-store';
    const record = newRecord({ owner, createdAt: Date.now() });
    const { created } = await store.records.create(record);
    const { handle } = record;
    expect(created).toBe(true);
    expect((await store.records.get(handle))?.owner).toBe(owner);
    expect((await store.queries.list({ owner })).records.map((r) => r.handle)).toEqual([handle]);

    // A refused create answers the record it collided with (ReturnValuesOnConditionCheckFailure ALL_OLD):
    // no read follows the Put.
    let again: Awaited<ReturnType<typeof store.records.create>> | undefined;
    const sent = await sentCommands(client, async () => {
      again = await store.records.create({ ...record, createdAt: record.createdAt + 1 });
    });
    expect(sent.map((c) => c.operation)).toEqual(['PutItem']);
    expect(again?.created).toBe(false);
    expect(again?.record.createdAt).toBe(record.createdAt);
  });

  it('is refused with a wrong secret: the signature does not match', async () => {
    const error = await clientWith({ ...keys, secretAccessKey: `${keys.secretAccessKey}x` })
      .send(new DescribeTableCommand({ TableName: TABLE }))
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ $metadata: { httpStatusCode: 403 } });
    expect(lastBody).toContain('<Code>SignatureDoesNotMatch</Code>');
  });

  it('is refused for a user without a DynamoDB permission', async () => {
    const error = await clientWith(readerKeys)
      .send(new DescribeTableCommand({ TableName: TABLE }))
      .catch((e: unknown) => e);
    // In IAM's XML, as above (DynamoDB itself sends AccessDeniedException as JSON).
    expect(error).toMatchObject({ $metadata: { httpStatusCode: 403 } });
    expect(lastBody).toMatch(
      /<Code>AccessDenied<\/Code>[\s\S]*not authorized to perform: dynamodb:DescribeTable/,
    );
  });
});
