/**
 * Bounded input through the deployed Run and DryRun handlers: numbers the app record cannot hold and
 * replica counts past the cap are a 400 naming the field, and nothing is written to the table or submitted.
 * Real store (dynalite); Batch faked at the SDK wire.
 */

import {
  BatchClient,
  DescribeJobDefinitionsCommand,
  DescribeJobsCommand,
  ListJobsCommand,
  RegisterJobDefinitionCommand,
  SubmitJobCommand,
} from '@aws-sdk/client-batch';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { lambdaContext, proxyEvent } from '../../../lib/local/lambda-events.js';
import { MAX_REPLICAS } from '../../../lib/specs/index.js';
import { type Dynalite, itemCount, startDynalite } from '../../helpers/dynalite.js';

const ALICE = 'arn:aws:sts::123456789012:assumed-role/ml-team/alice';
type Handler = (event: APIGatewayProxyEvent, context: unknown) => Promise<APIGatewayProxyResult>;
const handlers: Record<string, Handler> = {};
const batch = mockClient(BatchClient);
let db: Dynalite;
/** Every DynamoDB operation any client made. */
const operations: string[] = [];

beforeAll(async () => {
  db = await startDynalite();
  process.env.TXS_TABLE_NAME = db.tableName;
  process.env.TXS_DYNAMODB_ENDPOINT = db.endpoint;
  process.env.TXS_SCHEDULERS = 'aws_batch';
  process.env.TXS_STACK_NAME = 'TorchxServerless-test';
  const send = DynamoDBClient.prototype.send;
  vi.spyOn(DynamoDBClient.prototype, 'send').mockImplementation(function (this: DynamoDBClient, ...args) {
    operations.push(args[0].constructor.name.replace(/Command$/, ''));
    return (send as (...a: unknown[]) => Promise<unknown>).apply(this, args) as never;
  });
  for (const name of ['run', 'dryrun']) {
    handlers[name] = ((await import(`../../../functions/api/${name}.ts`)) as { handler: Handler }).handler;
  }
});
afterAll(() => db.close());

beforeEach(() => {
  operations.length = 0;
  batch.reset();
  batch.on(ListJobsCommand).resolves({ jobSummaryList: [] });
  batch.on(DescribeJobsCommand).resolves({ jobs: [] });
  batch.on(DescribeJobDefinitionsCommand).resolves({ jobDefinitions: [] });
  batch.on(RegisterJobDefinitionCommand).resolves({
    jobDefinitionName: 'def',
    jobDefinitionArn: 'arn:aws:batch:us-east-1:123456789012:job-definition/def:1',
    revision: 1,
  });
  batch.on(SubmitJobCommand).resolves({ jobId: 'j-1', jobName: 'job', jobArn: 'arn:aws:batch:::job/j-1' });
});

async function post(name: 'run' | 'dryrun', body: unknown) {
  const event = proxyEvent({
    method: 'POST',
    resource: name === 'run' ? '/v1/apps' : '/v1/dryrun',
    path: name === 'run' ? '/v1/apps' : '/v1/dryrun',
    headers: { 'content-type': ['application/json'] },
    query: {},
    pathParameters: null,
    // JSON.stringify writes 1e300 as `1e+300`, as any client would send it.
    body: JSON.stringify(body),
    isBase64Encoded: false,
    user: ALICE,
    sourceIp: '10.0.0.1',
    userAgent: null,
  });
  const result = await (handlers[name] as Handler)(event, lambdaContext(name));
  return {
    status: result.statusCode,
    error: (JSON.parse(result.body) as { error?: { code: string; details?: { path: string }[] } }).error,
  };
}

const role = (extra: Record<string, unknown> = {}) => ({
  name: 'echo',
  image: 'alpine',
  entrypoint: 'echo',
  resource: { cpu: 1, gpu: 0, memMB: 512 },
  ...extra,
});
const appRequest = (r: Record<string, unknown>, cfg: Record<string, unknown> = {}) => ({
  scheduler: 'aws_batch',
  cfg: { queue: 'gpu', ...cfg },
  app: { name: 'bounds', roles: [r] },
});

describe('POST /v1/apps with a number the app record cannot hold', () => {
  it.each([
    ['an unknown cfg key', appRequest(role(), { surprise: 1e300 }), 'cfg.surprise'],
    ['role metadata', appRequest(role({ metadata: { lr: 1e-300 } })), 'app.roles.0.metadata.lr'],
    [
      'resource cpu',
      appRequest(role({ resource: { cpu: 1e300, gpu: 0, memMB: 512 } })),
      'app.roles.0.resource.cpu',
    ],
    [
      'a capability',
      appRequest(role({ resource: { cpu: 1, gpu: 0, memMB: 512, capabilities: { x: 1e-300 } } })),
      'app.roles.0.resource.capabilities.x',
    ],
  ])('in %s answers 400 naming the field, with no write and no submission', async (_where, body, path) => {
    const reply = await post('run', body);
    expect(reply.status).toBe(400);
    expect(reply.error?.code).toBe('ValidationFailed');
    expect(reply.error?.details?.[0]?.path).toBe(path);
    expect(operations.filter((op) => op !== 'GetItem' && op !== 'Query')).toEqual([]);
    expect(batch.commandCalls(SubmitJobCommand)).toHaveLength(0);
    expect(await itemCount(db.client, db.tableName)).toBe(0);
  });
});

describe('component replica counts past the cap', () => {
  it.each([
    ['dryrun', ['-j', '1000000x1', '--script', 'train.py'], 'dist.ddp', 'args.j'],
    ['run', ['-j', '1:1000000x8', '--script', 'train.py'], 'dist.ddp', 'args.j'],
    ['run', ['--num_replicas', String(MAX_REPLICAS + 1)], 'utils.echo', 'args'],
  ] as const)(
    '%s %s %j answers 400 naming the argument, with no write',
    async (name, args, component, path) => {
      const reply = await post(name, { scheduler: 'aws_batch', cfg: { queue: 'gpu' }, component, args });
      expect(reply.status).toBe(400);
      expect(reply.error?.details?.[0]?.path).toBe(path);
      expect(operations.filter((op) => op !== 'GetItem' && op !== 'Query')).toEqual([]);
      expect(await itemCount(db.client, db.tableName)).toBe(0);
    },
  );
});
