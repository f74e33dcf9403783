/**
 * `GET /v1/apps/{scheduler}/{appId}?waitFor=` through its deployed handler (no local mode): the parameters
 * are validated as everywhere, and the request is answered at once, without the `Long-Polled` header, so a
 * client paces its own polls instead of holding a Lambda function. Real store (dynalite).
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lambdaContext, proxyEvent } from '../../../lib/local/lambda-events.js';
import { makeAppDef, makeAppHandle, makeResource, makeRole } from '../../../lib/specs/index.js';
import { DynamoAppRecordStore } from '../../../lib/store/index.js';
import { type Dynalite, startDynalite } from '../../helpers/dynalite.js';
import { contractProblems } from '../../helpers/openapi-validator.js';

const ACCOUNT = '123456789012';
const CALLER = `arn:aws:sts::${ACCOUNT}:assumed-role/ml-team/alice`;
const APP_ID = 'gpu:train-1';
const PATH = `/v1/apps/aws_batch/${encodeURIComponent(APP_ID)}`;

type Handler = (event: APIGatewayProxyEvent, context: unknown) => Promise<APIGatewayProxyResult>;
let handler: Handler;
let db: Dynalite;

beforeAll(async () => {
  db = await startDynalite();
  process.env.TXS_TABLE_NAME = db.tableName;
  process.env.TXS_DYNAMODB_ENDPOINT = db.endpoint;
  process.env.TXS_SCHEDULERS = 'aws_batch';
  process.env.TXS_STACK_NAME = 'TorchxServerless-test';
  const store = new DynamoAppRecordStore({ tableName: db.tableName, client: db.client });
  await store.records.create({
    handle: makeAppHandle('aws_batch', 'torchx', APP_ID),
    scheduler: 'aws_batch',
    session: 'torchx',
    appId: APP_ID,
    nativeName: 'train-1',
    owner: `arn:aws:iam::${ACCOUNT}:role/ml-team`,
    name: 'train',
    app: makeAppDef({
      name: 'train',
      roles: [
        makeRole({
          name: 'train',
          image: 'python:3.12',
          resource: makeResource({ cpu: 1, gpu: 0, memMB: 1024 }),
        }),
      ],
    }),
    cfg: {},
    state: 'RUNNING',
    createdAt: Date.UTC(2026, 10, 1),
  });
  handler = ((await import('../../../functions/api/status.js')) as { handler: Handler }).handler;
});
afterAll(() => db.close());

async function status(query: Record<string, string> = {}) {
  const event = proxyEvent({
    method: 'GET',
    resource: '/v1/apps/{scheduler}/{appId}',
    path: PATH,
    headers: {},
    query: Object.fromEntries(Object.entries(query).map(([k, v]) => [k, [v]])),
    pathParameters: { scheduler: 'aws_batch', appId: encodeURIComponent(APP_ID) },
    body: null,
    isBase64Encoded: false,
    user: CALLER,
    sourceIp: '10.0.0.1',
    userAgent: null,
  });
  const result = await handler(event, lambdaContext('Status'));
  const body = JSON.parse(result.body) as Record<string, unknown>;
  expect(contractProblems('GET', PATH, result.statusCode, body)).toEqual([]);
  return { status: result.statusCode, body, headers: result.headers ?? {} };
}

describe('GET /v1/apps/{scheduler}/{appId}?waitFor= in the deployed stack', () => {
  it('answers the unchanged record at once, without Long-Polled, so the client paces itself', async () => {
    const first = await status();
    expect(first.body.revision).toMatch(/^[A-Za-z0-9_-]{22}$/);
    const answer = await status({ waitFor: String(first.body.revision), waitSeconds: '20' });
    expect(answer.status).toBe(200);
    expect(answer.body.revision).toBe(first.body.revision);
    expect(answer.headers['long-polled']).toBeUndefined();
  });

  it('validates the parameters as local mode does', async () => {
    const bad = await status({ waitFor: 'not a revision' });
    expect(bad.status).toBe(400);
    expect((bad.body.error as { details: { path: string }[] }).details[0]?.path).toBe('waitFor');
  });
});
