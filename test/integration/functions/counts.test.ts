/**
 * `GET /v1/apps/counts` through its deployed handler, with the identities API Gateway sends: a caller's
 * counts cover its own apps only, deployment admins count every owner's with owner=all, the filters of
 * `GET /v1/apps` apply, and bad filters get a 4xx naming the parameter. Real store (dynalite).
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lambdaContext, proxyEvent } from '../../../lib/local/lambda-events.js';
import { type AppState, makeAppDef, makeAppHandle } from '../../../lib/specs/index.js';
import { DynamoAppRecordStore } from '../../../lib/store/index.js';
import { type Dynalite, startDynalite } from '../../helpers/dynalite.js';
import { contractProblems } from '../../helpers/openapi-validator.js';

const ACCOUNT = '123456789012';
const ML_TEAM = `arn:aws:sts::${ACCOUNT}:assumed-role/ml-team/alice`;
const VISION_TEAM = `arn:aws:sts::${ACCOUNT}:assumed-role/vision-team/bob`;
const ADMIN = `arn:aws:sts::${ACCOUNT}:assumed-role/platform-admin/carol`;

type Handler = (event: APIGatewayProxyEvent, context: unknown) => Promise<APIGatewayProxyResult>;
let handler: Handler;
let db: Dynalite;

beforeAll(async () => {
  db = await startDynalite();
  process.env.TXS_TABLE_NAME = db.tableName;
  process.env.TXS_DYNAMODB_ENDPOINT = db.endpoint;
  process.env.TXS_SCHEDULERS = 'aws_batch,aws_sagemaker';
  process.env.TXS_ADMIN_PRINCIPALS = `arn:aws:iam::${ACCOUNT}:role/admins/platform-admin`;
  process.env.TXS_STACK_NAME = 'TorchxServerless-test';
  const store = new DynamoAppRecordStore({ tableName: db.tableName, client: db.client });
  const seed: Array<[owner: string, scheduler: string, session: string, state: AppState]> = [
    ['ml-team', 'aws_batch', 'torchx', 'RUNNING'],
    ['ml-team', 'aws_batch', 'torchx', 'RUNNING'],
    ['ml-team', 'aws_sagemaker', 'nightly', 'FAILED'],
    ['ml-team', 'aws_batch', 'nightly', 'SUCCEEDED'],
    ['vision-team', 'aws_batch', 'torchx', 'PENDING'],
    ['vision-team', 'aws_batch', 'torchx', 'RUNNING'],
  ];
  for (const [i, [role, scheduler, session, state]] of seed.entries()) {
    const appId = `gpu:job-${i}`;
    await store.records.create({
      handle: makeAppHandle(scheduler, session, appId),
      scheduler,
      session,
      appId,
      nativeName: `job-${i}`,
      owner: `arn:aws:iam::${ACCOUNT}:role/${role}`,
      name: 'train',
      app: makeAppDef({ name: 'train' }),
      cfg: {},
      state,
      createdAt: Date.UTC(2026, 10, 1 + i),
    });
  }
  handler = ((await import('../../../functions/api/counts.js')) as { handler: Handler }).handler;
});
afterAll(() => db.close());

async function counts(user: string, query: Record<string, string> = {}) {
  const event = proxyEvent({
    method: 'GET',
    resource: '/v1/apps/counts',
    path: '/v1/apps/counts',
    headers: {},
    query: Object.fromEntries(Object.entries(query).map(([k, v]) => [k, [v]])),
    pathParameters: null,
    body: null,
    isBase64Encoded: false,
    user,
    sourceIp: '10.0.0.1',
    userAgent: null,
  });
  const result = await handler(event, lambdaContext('Counts'));
  const body = JSON.parse(result.body) as Record<string, unknown>;
  expect(contractProblems('GET', '/v1/apps/counts', result.statusCode, body)).toEqual([]);
  return { status: result.statusCode, body };
}

describe('GET /v1/apps/counts', () => {
  it("counts the caller's own apps per state and no one else's", async () => {
    expect(await counts(ML_TEAM)).toEqual({
      status: 200,
      body: { counts: { RUNNING: 2, FAILED: 1, SUCCEEDED: 1 }, counted: 4, complete: true },
    });
    expect((await counts(VISION_TEAM)).body).toEqual({
      counts: { PENDING: 1, RUNNING: 1 },
      counted: 2,
      complete: true,
    });
  });

  it('applies the scheduler, session and since filters of GET /v1/apps', async () => {
    expect((await counts(ML_TEAM, { scheduler: 'aws_batch', session: 'torchx' })).body).toEqual({
      counts: { RUNNING: 2 },
      counted: 2,
      complete: true,
    });
    expect((await counts(ML_TEAM, { since: '2026-11-03T00:00:00Z' })).body).toMatchObject({
      counts: { FAILED: 1, SUCCEEDED: 1 },
      counted: 2,
    });
  });

  it("counts every owner's apps for a deployment admin with owner=all, and one owner's with owner=<owner>", async () => {
    expect((await counts(ADMIN, { owner: 'all' })).body).toEqual({
      counts: { RUNNING: 3, FAILED: 1, SUCCEEDED: 1, PENDING: 1 },
      counted: 6,
      complete: true,
    });
    expect((await counts(ADMIN, { owner: `arn:aws:iam::${ACCOUNT}:role/vision-team` })).body).toMatchObject({
      counted: 2,
    });
  });

  it('refuses owner=all from anyone else with 403 naming owner', async () => {
    const reply = await counts(ML_TEAM, { owner: 'all' });
    expect(reply.status).toBe(403);
    expect(reply.body.error).toMatchObject({ code: 'Forbidden', details: [{ path: 'owner' }] });
  });

  it('answers a bad filter with 400 naming it', async () => {
    const since = await counts(ML_TEAM, { since: 'yesterday-ish' });
    expect(since.status).toBe(400);
    expect(since.body.error).toMatchObject({ details: [{ path: 'since' }] });
    const scheduler = await counts(ML_TEAM, { scheduler: 'bogus' });
    expect(scheduler.status).toBe(400);
    expect(JSON.stringify(scheduler.body)).toContain('bogus');
  });
});
