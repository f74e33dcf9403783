/**
 * Authorization through the deployed handlers, with the identities API Gateway really sends: owners are
 * roles (not sessions), admins configured by the deployment act on every app, nobody else sees another
 * owner's apps, and host access is refused unless the deployment allows it. Real store (dynalite); Batch
 * faked at the SDK wire.
 */
import { BatchClient, DescribeJobsCommand, ListJobsCommand } from '@aws-sdk/client-batch';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lambdaContext, proxyEvent } from '../../../lib/local/lambda-events.js';
import { makeAppDef, makeAppHandle } from '../../../lib/specs/index.js';
import { DynamoAppRecordStore } from '../../../lib/store/index.js';
import { type Dynalite, startDynalite } from '../../helpers/dynalite.js';

const ACCOUNT = '123456789012';
const session = (role: string, name: string) => `arn:aws:sts::${ACCOUNT}:assumed-role/${role}/${name}`;
const ALICE_MORNING = session('ml-team', 'alice-1700000000');
const ALICE_EVENING = session('ml-team', 'i-0abc-rotated');
const OTHER_TEAM = session('vision-team', 'bob');
const ADMIN = session('platform-admin', 'carol');
const SSO_DAVE = session('AWSReservedSSO_Engineer_0123456789abcdef', 'dave@example.com');
const SSO_ERIN = session('AWSReservedSSO_Engineer_0123456789abcdef', 'erin@example.com');

type Handler = (event: APIGatewayProxyEvent, context: unknown) => Promise<APIGatewayProxyResult>;
const handlers: Record<string, Handler> = {};
const batch = mockClient(BatchClient);
let db: Dynalite;
let store: DynamoAppRecordStore;

beforeAll(async () => {
  db = await startDynalite();
  process.env.TXS_TABLE_NAME = db.tableName;
  process.env.TXS_DYNAMODB_ENDPOINT = db.endpoint;
  process.env.TXS_SCHEDULERS = 'aws_batch,aws_sagemaker';
  process.env.TXS_ADMIN_PRINCIPALS = `arn:aws:iam::${ACCOUNT}:role/admins/platform-admin`;
  process.env.TXS_SESSION_OWNER_ROLES = 'AWSReservedSSO_*';
  process.env.TXS_STACK_NAME = 'TorchxServerless-test';
  batch.on(ListJobsCommand).resolves({ jobSummaryList: [] });
  batch.on(DescribeJobsCommand).resolves({ jobs: [] });
  store = new DynamoAppRecordStore({ tableName: db.tableName, client: db.client });
  for (const name of ['list', 'status', 'cancel', 'delete', 'run', 'dryrun']) {
    handlers[name] = ((await import(`../../../functions/api/${name}.ts`)) as { handler: Handler }).handler;
  }
});
afterAll(() => db.close());

async function call(
  name: string,
  user: string,
  options: { path?: Record<string, string>; query?: Record<string, string>; body?: unknown } = {},
) {
  const event = proxyEvent({
    method: options.body === undefined ? 'GET' : 'POST',
    resource: '/v1/apps',
    path: '/v1/apps',
    headers: options.body === undefined ? {} : { 'content-type': ['application/json'] },
    query: Object.fromEntries(Object.entries(options.query ?? {}).map(([k, v]) => [k, [v]])),
    pathParameters: options.path ?? null,
    body: options.body === undefined ? null : JSON.stringify(options.body),
    isBase64Encoded: false,
    user,
    sourceIp: '10.0.0.1',
    userAgent: null,
  });
  const result = await (handlers[name] as Handler)(event, lambdaContext(name));
  return { status: result.statusCode, body: JSON.parse(result.body) as Record<string, unknown> };
}

let counter = 0;
async function appOf(owner: string): Promise<{ appId: string }> {
  counter += 1;
  const nativeName = `job-${counter}`;
  const appId = `gpu:${nativeName}`;
  await store.records.create({
    handle: makeAppHandle('aws_batch', 'torchx', appId),
    scheduler: 'aws_batch',
    session: 'torchx',
    appId,
    nativeName,
    owner,
    name: 'train',
    app: makeAppDef({ name: 'train' }),
    cfg: {},
    state: 'SUCCEEDED',
    createdAt: Date.now() + counter,
  });
  return { appId };
}
const pathOf = (appId: string) => ({ path: { scheduler: 'aws_batch', appId } });
const ownersIn = (body: Record<string, unknown>) =>
  new Set((body.apps as { owner: string }[]).map((app) => app.owner));

describe('owners in AWS', () => {
  it('are the role, so a rotated session still sees its apps', async () => {
    const { appId } = await appOf(`arn:aws:iam::${ACCOUNT}:role/ml-team`);
    const morning = await call('status', ALICE_MORNING, pathOf(appId));
    const evening = await call('status', ALICE_EVENING, pathOf(appId));
    expect(morning.status).toBe(200);
    expect(evening.status).toBe(200);
    expect(evening.body.owner).toBe(`arn:aws:iam::${ACCOUNT}:role/ml-team`);
  });

  it("answer 404 for another role's app, exactly as for an unknown one", async () => {
    const { appId } = await appOf(`arn:aws:iam::${ACCOUNT}:role/ml-team`);
    const other = await call('status', OTHER_TEAM, pathOf(appId));
    expect(other.status).toBe(404);
    expect((other.body.error as { code: string }).code).toBe('UnknownApp');
    expect((await call('cancel', OTHER_TEAM, pathOf(appId))).status).toBe(404);
    expect((await call('delete', OTHER_TEAM, pathOf(appId))).status).toBe(404);
  });

  it('are per session for roles whose session names an identity provider sets', async () => {
    const { appId } = await appOf(SSO_DAVE);
    expect((await call('status', SSO_DAVE, pathOf(appId))).status).toBe(200);
    expect((await call('status', SSO_ERIN, pathOf(appId))).status).toBe(404);
  });

  it("refuse the account's root user with 403 Forbidden", async () => {
    const reply = await call('list', `arn:aws:iam::${ACCOUNT}:root`);
    expect(reply.status).toBe(403);
    expect((reply.body.error as { code: string }).code).toBe('Forbidden');
  });

  it('record the role as the owner of a new app', async () => {
    const reply = await call('dryrun', ALICE_MORNING, {
      body: { scheduler: 'aws_batch', cfg: { queue: 'gpu' }, component: 'utils.echo' },
    });
    expect(reply.status).toBe(200);
    // The user tag defaults to the owner's last segment: the role name, never the session name.
    expect(JSON.stringify(reply.body)).toContain('"torchx.pytorch.org/user":"ml-team"');
  });
});

describe('deployment admins', () => {
  it("list every owner's apps with owner=all", async () => {
    await appOf(`arn:aws:iam::${ACCOUNT}:role/ml-team`);
    await appOf(`arn:aws:iam::${ACCOUNT}:role/vision-team`);
    const reply = await call('list', ADMIN, { query: { owner: 'all', limit: '100' } });
    expect(reply.status).toBe(200);
    expect([...ownersIn(reply.body)]).toEqual(
      expect.arrayContaining([
        `arn:aws:iam::${ACCOUNT}:role/ml-team`,
        `arn:aws:iam::${ACCOUNT}:role/vision-team`,
      ]),
    );
  });

  it("list one other owner's apps with owner=<owner>", async () => {
    const reply = await call('list', ADMIN, { query: { owner: `arn:aws:iam::${ACCOUNT}:role/vision-team` } });
    expect(reply.status).toBe(200);
    expect([...ownersIn(reply.body)]).toEqual([`arn:aws:iam::${ACCOUNT}:role/vision-team`]);
  });

  it('read, cancel and delete another owner’s app by handle', async () => {
    const { appId } = await appOf(`arn:aws:iam::${ACCOUNT}:role/vision-team`);
    expect((await call('status', ADMIN, pathOf(appId))).status).toBe(200);
    expect((await call('cancel', ADMIN, { ...pathOf(appId), body: {} })).status).toBe(202);
    expect((await call('delete', ADMIN, pathOf(appId))).status).toBe(202);
  });
});

describe('everyone else', () => {
  it('gets 403 Forbidden naming owner for owner=all', async () => {
    const reply = await call('list', ALICE_MORNING, { query: { owner: 'all' } });
    expect(reply.status).toBe(403);
    const error = reply.body.error as { code: string; details: { path: string }[] };
    expect(error.code).toBe('Forbidden');
    expect(error.details[0]?.path).toBe('owner');
  });

  it("gets 403 for another owner's listing, and its own with owner=<itself>", async () => {
    expect(
      (await call('list', ALICE_MORNING, { query: { owner: `arn:aws:iam::${ACCOUNT}:role/vision-team` } }))
        .status,
    ).toBe(403);
    const own = await call('list', ALICE_MORNING, {
      query: { owner: `arn:aws:iam::${ACCOUNT}:role/ml-team` },
    });
    expect(own.status).toBe(200);
    expect([...ownersIn(own.body)]).toEqual([`arn:aws:iam::${ACCOUNT}:role/ml-team`]);
  });
});

describe('host access in AWS (nothing configured)', () => {
  const app = (mounts: unknown[]) => ({
    name: 'root',
    roles: [{ name: 'r', image: 'alpine', entrypoint: 'sh', resource: 'cpu.small', mounts }],
  });

  it('refuses a privileged run with 403 naming cfg.privileged, and writes nothing', async () => {
    batch.resetHistory();
    const before = await call('list', ALICE_MORNING, { query: { limit: '100' } });
    const reply = await call('run', ALICE_MORNING, {
      body: { scheduler: 'aws_batch', cfg: { queue: 'gpu', privileged: true }, component: 'utils.echo' },
    });
    expect(reply.status).toBe(403);
    const error = reply.body.error as { code: string; message: string; details: { path: string }[] };
    expect(error.code).toBe('HostAccessDenied');
    expect(error.details.map((d) => d.path)).toEqual(['cfg.privileged']);
    expect(error.message).toContain('TXS_ALLOW_PRIVILEGED');
    const after = await call('list', ALICE_MORNING, { query: { limit: '100' } });
    expect((after.body.apps as unknown[]).length).toBe((before.body.apps as unknown[]).length);
    expect(batch.calls()).toHaveLength(0);
  });

  it('refuses a bind mount of / and a /dev/mem device, naming each mount', async () => {
    const reply = await call('dryrun', ALICE_MORNING, {
      body: {
        scheduler: 'aws_batch',
        cfg: { queue: 'gpu' },
        app: app([
          { type: 'bind', srcPath: '/', dstPath: '/host' },
          { type: 'device', srcPath: '/dev/mem' },
        ]),
      },
    });
    expect(reply.status).toBe(403);
    const error = reply.body.error as { code: string; details: { path: string; message: string }[] };
    expect(error.details.map((d) => d.path)).toEqual([
      'app.roles.0.mounts.0.srcPath',
      'app.roles.0.mounts.1.srcPath',
    ]);
    expect(error.details[0]?.message).toContain('TXS_ALLOWED_HOST_PATHS');
    expect(error.details[1]?.message).toContain('TXS_ALLOWED_DEVICES');
  });

  it('tags every Batch job and definition with the stack tag', async () => {
    const reply = await call('dryrun', ALICE_MORNING, {
      body: { scheduler: 'aws_batch', cfg: { queue: 'gpu' }, component: 'utils.echo' },
    });
    const request = reply.body.request as {
      registerJobDefinition: { tags: Record<string, string> };
      submitJob: { tags: Record<string, string> };
    };
    expect(request.registerJobDefinition.tags['torchx-serverless:stack']).toBe('TorchxServerless-test');
    expect(request.submitJob.tags['torchx-serverless:stack']).toBe('TorchxServerless-test');
  });
});
