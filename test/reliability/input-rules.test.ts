/**
 * Reliability: the input probes of issue 17 through the deployed handlers (dynalite, the fake AWS data
 * plane). Each bad input is a 400 naming its field, and nothing reaches DynamoDB or AWS.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FunctionsEnvironment, startFunctionsEnvironment } from './helpers/environment.js';
import { invoke } from './helpers/lambda.js';
import { BATCH_RUN } from './helpers/requests.js';

let env: FunctionsEnvironment;
let appId: string;
beforeAll(async () => {
  env = await startFunctionsEnvironment();
  const run = await invoke(env.api.Run, { method: 'POST', resource: '/v1/apps', body: BATCH_RUN });
  expect(run.statusCode).toBe(201);
  appId = String(run.body.appId);
});
afterAll(() => env.close());

const APP = '/v1/apps/{scheduler}/{appId}';

/** Every DynamoDB and AWS call made since the last take. */
function takeAllCalls(): { dynamo: Record<string, number>; aws: Record<string, number> } {
  return { dynamo: env.takeDynamoCalls(), aws: env.aws.takeCalls() };
}

function issueOf(body: Record<string, unknown>): { code: string; path: string | undefined; message: string } {
  const error = body.error as { code: string; message: string; details?: { path: string }[] };
  return { code: error.code, path: error.details?.[0]?.path, message: error.message };
}

describe('app ids at the route', () => {
  it('reaches the app by its own id (the baseline the probes below differ from)', async () => {
    const reply = await invoke(env.api.Status, {
      method: 'GET',
      resource: APP,
      pathParameters: { scheduler: 'aws_batch', appId },
    });
    expect(reply.statusCode).toBe(200);
    expect(appId).toMatch(/^ml-gpu-queue:echo-[a-z0-9]+$/);
  });

  it.each([
    ['x%2F<appId> (an encoded slash)', (id: string) => `x%2F${encodeURIComponent(id)}`],
    ['..%2F<appId> (an encoded parent segment)', (id: string) => `..%2F${encodeURIComponent(id)}`],
    ['x/<appId> (already decoded)', (id: string) => `x/${id}`],
    ['%252F (a double-encoded slash)', (id: string) => `x%252F${id}`],
    ['an encoded letter (a second spelling)', (id: string) => `%6D${id.slice(1)}`],
    ['a trailing zero-width space', (id: string) => `${id}%E2%80%8B`],
  ])('refuses %s with a 400 naming appId, before any DynamoDB or AWS call', async (_what, spell) => {
    takeAllCalls();
    for (const [route, method, resource] of [
      ['Status', 'GET', APP],
      ['Cancel', 'POST', `${APP}/cancel`],
      ['Delete', 'DELETE', APP],
      ['Logs', 'GET', `${APP}/logs`],
    ] as const) {
      const reply = await invoke(env.api[route], {
        method,
        resource,
        pathParameters: { scheduler: 'aws_batch', appId: spell(appId) },
      });
      expect(reply.statusCode, route).toBe(400);
      expect(issueOf(reply.body).path, route).toBe('appId');
    }
    expect(takeAllCalls()).toEqual({ dynamo: {}, aws: {} });
  });

  it('answers a 5,000-character id with a 400 naming appId, not DynamoDB words or the table name', async () => {
    takeAllCalls();
    for (const scheduler of ['aws_batch', 'aws_sagemaker', 'local_cwd', 'no_such_scheduler']) {
      const reply = await invoke(env.api.Status, {
        method: 'GET',
        resource: APP,
        pathParameters: { scheduler, appId: 'a'.repeat(5_000) },
      });
      expect(reply.statusCode).toBe(400);
      const issue = issueOf(reply.body);
      expect(issue).toMatchObject({ code: 'ValidationFailed', path: 'appId' });
      expect(issue.message).toMatch(/at most 257/);
      expect(JSON.stringify(reply.body)).not.toMatch(
        new RegExp(`DynamoDB|ValidationException|${env.db.tableName}`),
      );
    }
    expect(takeAllCalls()).toEqual({ dynamo: {}, aws: {} });
  });

  // This environment enables aws_batch and aws_sagemaker: a well-formed id of those is just not an app of
  // this caller (404); local_cwd's well-formed id passes the id checks and is then refused for its
  // scheduler, which this deployment does not run.
  it.each([
    [
      'aws_batch',
      'gpu-queue:train-k3x9',
      'arn:aws:batch:us-east-1:123456789012:job-queue/gpu:train-k3x9',
      404,
    ],
    ['aws_sagemaker', 'train-k3x9', 'train_k3x9', 404],
    ['local_cwd', 'echo-k3x9', '..', 400],
  ])('applies %s app id shape: %s passes, %s is refused', async (scheduler, good, bad, okStatus) => {
    const ok = await invoke(env.api.Status, {
      method: 'GET',
      resource: APP,
      pathParameters: { scheduler, appId: good },
    });
    expect(ok.statusCode).toBe(okStatus);
    if (okStatus === 400)
      expect(issueOf(ok.body)).toMatchObject({ code: 'UnknownScheduler', path: 'scheduler' });
    const refused = await invoke(env.api.Status, {
      method: 'GET',
      resource: APP,
      pathParameters: { scheduler, appId: encodeURIComponent(bad) },
    });
    expect(refused.statusCode).toBe(400);
    expect(issueOf(refused.body).path).toBe('appId');
  });
});

describe('list filters', () => {
  it.each([
    ['scheduler', 'a'.repeat(5_000)],
    ['scheduler', 'aws_batch\u202E'],
    ['session', 'torchx/x'],
  ])('refuses a bad %s filter with a 400 naming it, before any DynamoDB call', async (name, value) => {
    takeAllCalls();
    const reply = await invoke(env.api.List, {
      method: 'GET',
      resource: '/v1/apps',
      query: { [name]: value },
    });
    expect(reply.statusCode).toBe(400);
    expect(issueOf(reply.body).path).toBe(name);
    expect(takeAllCalls()).toEqual({ dynamo: {}, aws: {} });
  });
});

describe('names and cfg values before anything is written', () => {
  it.each([
    ['a newline in the queue', { ...BATCH_RUN, cfg: { queue: 'q\n' } }, 'cfg.queue'],
    ['a queue with a space', { ...BATCH_RUN, cfg: { queue: 'gpu queue' } }, 'cfg.queue'],
    [
      'a malformed queue ARN',
      { ...BATCH_RUN, cfg: { queue: 'arn:aws:batch:us-east-1:1:job-queue/q' } },
      'cfg.queue',
    ],
    [
      'a job role that is not a role ARN',
      { ...BATCH_RUN, cfg: { queue: 'ml-gpu-queue', job_role_arn: 'arn:aws:iam::123456789012:user/x' } },
      'cfg.job_role_arn',
    ],
    [
      'a bidi override in the user tag',
      { ...BATCH_RUN, cfg: { queue: 'ml-gpu-queue', user: 'bob\u202E' } },
      'cfg.user',
    ],
    [
      'a SageMaker output path with a newline',
      {
        scheduler: 'aws_sagemaker',
        component: 'utils.echo',
        cfg: { role: 'arn:aws:iam::123456789012:role/sm', output_path: 's3://bucket/out\n' },
      },
      'cfg.output_path',
    ],
    [
      'a bidi override in the app name',
      {
        scheduler: 'aws_batch',
        cfg: { queue: 'ml-gpu-queue' },
        app: { name: 'train\u202Egnp', roles: [{ name: 'r', image: 'i', entrypoint: 'e' }] },
      },
      'app.name',
    ],
    [
      'a zero-width space in a role name',
      {
        scheduler: 'aws_batch',
        cfg: { queue: 'ml-gpu-queue' },
        app: { name: 'train', roles: [{ name: 'wor\u200Bker', image: 'i', entrypoint: 'e' }] },
      },
      'app.roles.0.name',
    ],
  ])('refuses %s with a 400 naming it: no DynamoDB write, no AWS call', async (_what, body, path) => {
    takeAllCalls();
    for (const [route, resource] of [
      ['Dryrun', '/v1/dryrun'],
      ['Run', '/v1/apps'],
    ] as const) {
      const reply = await invoke(env.api[route], { method: 'POST', resource, body });
      expect(reply.statusCode, route).toBe(400);
      const error = reply.body.error as { details: { path: string }[] };
      expect(error.details.map((d) => d.path)).toContain(path);
    }
    const { dynamo, aws } = takeAllCalls();
    expect(Object.keys(dynamo).filter((name) => !/^(Get|Query)/.test(name))).toEqual([]);
    expect(aws).toEqual({});
  });

  it('accepts a queue ARN and names the app by the queue name (one handle per app)', async () => {
    const reply = await invoke(env.api.Run, {
      method: 'POST',
      resource: '/v1/apps',
      body: { ...BATCH_RUN, cfg: { queue: 'arn:aws:batch:us-east-1:123456789012:job-queue/ml-gpu-queue' } },
    });
    expect(reply.statusCode).toBe(201);
    expect(String(reply.body.handle)).toMatch(/^aws_batch:\/\/torchx\/ml-gpu-queue:echo-[a-z0-9]+$/);
  });
});

describe('the logs regex', () => {
  it('refuses a backreference with a 400 naming regex before reading the record', async () => {
    takeAllCalls();
    const reply = await invoke(env.api.Logs, {
      method: 'GET',
      resource: `${APP}/logs`,
      pathParameters: { scheduler: 'aws_batch', appId },
      query: { regex: '(a)\\1' },
    });
    expect(reply.statusCode).toBe(400);
    expect(issueOf(reply.body).path).toBe('regex');
    expect(issueOf(reply.body).message).toMatch(/RE2 syntax/);
    expect(takeAllCalls()).toEqual({ dynamo: {}, aws: {} });
  });
});
