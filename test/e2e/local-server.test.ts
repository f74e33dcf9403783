/**
 * End to end over real HTTP against the local server (`npm start`'s server): dynalite in-process, the
 * local_cwd scheduler running real processes, and the same handlers the stack deploys.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalServer } from '../../lib/local/server.js';

let server: LocalServer;
let dataDir: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'txs-e2e-'));
  const { startLocalServer } = await import('../../lib/local/server.js');
  server = await startLocalServer({ port: 0, dataDir, inMemory: true, reconcileEveryMs: 0 });
});
afterAll(async () => {
  await server?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

interface Reply {
  status: number;
  body: Record<string, unknown>;
  headers: Headers;
}

async function call(
  method: string,
  path: string,
  options: { body?: unknown; raw?: string; user?: string; headers?: Record<string, string> } = {},
): Promise<Reply> {
  const headers: Record<string, string> = { 'x-txs-user': options.user ?? 'e2e', ...(options.headers ?? {}) };
  let body: string | undefined;
  if (options.raw !== undefined) body = options.raw;
  else if (options.body !== undefined) body = JSON.stringify(options.body);
  if (body !== undefined && !('content-type' in headers)) headers['content-type'] = 'application/json';
  const response = await fetch(`${server.url}${path}`, { method, headers, body });
  const text = await response.text();
  return {
    status: response.status,
    body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
    headers: response.headers,
  };
}

const appPath = (appId: string) => `/v1/apps/local_cwd/${encodeURIComponent(appId)}`;

async function waitForState(
  appId: string,
  accept: (state: string) => boolean,
  user = 'e2e',
): Promise<Record<string, unknown>> {
  for (let i = 0; i < 200; i++) {
    const reply = await call('GET', appPath(appId), { user });
    const state = (reply.body.status as { state: string }).state;
    if (accept(state)) return reply.body;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`app ${appId} never reached the expected state`);
}

describe('local server', () => {
  it('runs utils.echo on local_cwd to SUCCEEDED with its output in the logs', async () => {
    const run = await call('POST', '/v1/apps', {
      body: { scheduler: 'local_cwd', component: 'utils.echo', args: ['--msg', 'hello from e2e'] },
    });
    expect(run.status).toBe(201);
    expect(run.body).toMatchObject({ scheduler: 'local_cwd', session: 'torchx' });
    expect(String(run.body.handle)).toMatch(/^local_cwd:\/\/torchx\/echo-[a-z0-9]+$/);
    const appId = String(run.body.appId);
    const detail = await waitForState(appId, (s) => ['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(s));
    expect((detail.status as { state: string }).state).toBe('SUCCEEDED');
    expect((detail.history as { to: string }[]).map((h) => h.to)).toContain('SUCCEEDED');

    const logs = await call('GET', `${appPath(appId)}/logs`);
    expect(logs.status).toBe(200);
    expect(logs.body).toEqual({ lines: ['hello from e2e'], caughtUp: true });
  });

  it('cancels a long sleep to CANCELLED', async () => {
    const run = await call('POST', '/v1/apps', {
      body: { scheduler: 'local_cwd', component: 'utils.sh', args: ['sleep', '60'] },
    });
    expect(run.status).toBe(201);
    const appId = String(run.body.appId);
    await waitForState(appId, (s) => s === 'RUNNING');
    const cancel = await call('POST', `${appPath(appId)}/cancel`);
    expect(cancel.status).toBe(202);
    const detail = await waitForState(appId, (s) => s === 'CANCELLED' || s === 'FAILED' || s === 'SUCCEEDED');
    expect((detail.status as { state: string }).state).toBe('CANCELLED');
    expect(detail.cancelRequestedAt).toEqual(expect.any(String));
    const again = await call('POST', `${appPath(appId)}/cancel`);
    expect(again.status).toBe(202);
    expect(again.body.state).toBe('CANCELLED');
  });

  it('reports a failing job as FAILED with its exit code', async () => {
    const run = await call('POST', '/v1/apps', {
      body: { scheduler: 'local_cwd', component: 'utils.sh', args: ['sh', '-c', 'exit 3'] },
    });
    const detail = await waitForState(String(run.body.appId), (s) =>
      ['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(s),
    );
    const status = detail.status as { state: string; roles: { replicas: { exitCode?: number }[] }[] };
    expect(status.state).toBe('FAILED');
    expect(status.roles[0]?.replicas[0]?.exitCode).toBe(3);
  });

  it('returns the same handle for an idempotent retry and submits once', async () => {
    const body = { scheduler: 'local_cwd', component: 'utils.echo', args: ['--msg', 'once'] };
    const headers = { 'idempotency-key': 'e2e-key-1' };
    const first = await call('POST', '/v1/apps', { body, headers, user: 'idem' });
    const second = await call('POST', '/v1/apps', { body, headers, user: 'idem' });
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.body.handle).toBe(first.body.handle);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    const list = await call('GET', '/v1/apps', { user: 'idem' });
    expect((list.body.apps as unknown[]).length).toBe(1);
    const conflict = await call('POST', '/v1/apps', {
      body: { ...body, args: ['--msg', 'other'] },
      headers,
      user: 'idem',
    });
    expect(conflict.status).toBe(422);
    expect(conflict.body.error).toMatchObject({ code: 'IdempotencyConflict' });
  });

  it.each([
    ['invalid JSON', { raw: '{"scheduler": ' }, 400, 'InvalidJson', 'body'],
    ['a non-object body', { body: [1, 2] }, 400, 'ValidationFailed', 'body'],
    ['a missing scheduler', { body: { component: 'utils.echo' } }, 400, 'ValidationFailed', 'scheduler'],
    [
      'a wrong type',
      { body: { scheduler: 'local_cwd', component: 'utils.echo', args: 'hi' } },
      400,
      'ValidationFailed',
      'args',
    ],
    [
      'an unknown scheduler',
      { body: { scheduler: 'slurm', component: 'utils.echo' } },
      400,
      'UnknownScheduler',
      'scheduler',
    ],
    [
      'an unknown component',
      { body: { scheduler: 'local_cwd', component: 'utils.nope' } },
      400,
      'UnknownComponent',
      'component',
    ],
    [
      'a bad component argument',
      { body: { scheduler: 'local_cwd', component: 'utils.echo', args: ['--bogus', '1'] } },
      400,
      'InvalidComponentArgument',
      'args',
    ],
    ['neither app nor component', { body: { scheduler: 'local_cwd' } }, 400, 'ValidationFailed', 'app'],
    [
      'an AppDef role without entrypoint',
      { body: { scheduler: 'local_cwd', app: { name: 'x', roles: [{ name: 'r', image: 'i' }] } } },
      400,
      'ValidationFailed',
      'app.roles.0.entrypoint',
    ],
    [
      'a bad run option type',
      { body: { scheduler: 'aws_batch', cfg: { queue: 5 }, component: 'utils.echo' } },
      400,
      'InvalidRunConfig',
      'cfg.queue',
    ],
    [
      'a missing required run option',
      { body: { scheduler: 'aws_batch', component: 'utils.echo' } },
      400,
      'InvalidRunConfig',
      'cfg.queue',
    ],
    [
      'a text body',
      { raw: 'hello', headers: { 'content-type': 'text/plain' } },
      415,
      'UnsupportedMediaType',
      undefined,
    ],
  ])(
    'rejects %s with a 4xx naming the problem and records nothing',
    async (_name, request, status, code, path) => {
      const user = `bad-${code}-${path ?? 'none'}`;
      const reply = await call('POST', '/v1/apps', { ...request, user });
      expect(reply.status).toBe(status);
      const error = reply.body.error as { code: string; message: string; details?: { path: string }[] };
      expect(error.code).toBe(code);
      expect(error.message.length).toBeGreaterThan(10);
      if (path !== undefined) expect(error.details?.map((d) => d.path)).toContain(path);
      const list = await call('GET', '/v1/apps', { user });
      expect(list.body.apps).toEqual([]);
    },
  );

  it('answers 404 for an unknown app and for another user’s app, 404/405 for unknown routes', async () => {
    const unknown = await call('GET', appPath('nope-123'));
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatchObject({ code: 'UnknownApp' });
    const run = await call('POST', '/v1/apps', {
      body: { scheduler: 'local_cwd', component: 'utils.echo' },
      user: 'owner-a',
    });
    const other = await call('GET', appPath(String(run.body.appId)), { user: 'owner-b' });
    expect(other.status).toBe(404);
    expect((await call('GET', '/v2/nothing')).status).toBe(404);
    const wrongMethod = await call('PUT', '/v1/apps');
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toBe('POST, GET');
  });

  it('dry-runs Batch and SageMaker requests offline', async () => {
    const batch = await call('POST', '/v1/dryrun', {
      body: {
        scheduler: 'aws_batch',
        cfg: { queue: 'gpu' },
        component: 'dist.ddp',
        args: ['-j', '2x8', '--script', 'train.py'],
      },
    });
    expect(batch.status).toBe(200);
    const request = batch.body.request as {
      registerJobDefinition: { type: string; nodeProperties: { numNodes: number } };
      submitJob: { jobQueue: string };
    };
    expect(request.registerJobDefinition.type).toBe('multinode');
    expect(request.registerJobDefinition.nodeProperties.numNodes).toBe(2);
    expect(request.submitJob.jobQueue).toBe('gpu');
    expect(String(batch.body.text)).toContain('train');

    const sm = await call('POST', '/v1/dryrun', {
      body: {
        scheduler: 'aws_sagemaker',
        cfg: { role: 'arn:aws:iam::123456789012:role/sm', output_path: 's3://bucket/out' },
        component: 'dist.ddp',
        args: ['-j', '2x8', '-h', 'aws_p4d.24xlarge', '--script', 'train.py'],
      },
    });
    expect(sm.status).toBe(200);
    const create = (
      sm.body.request as {
        createTrainingJob: { ResourceConfig: { InstanceType: string; InstanceCount: number } };
      }
    ).createTrainingJob;
    expect(create.ResourceConfig).toMatchObject({ InstanceType: 'ml.p4d.24xlarge', InstanceCount: 2 });
    const list = await call('GET', '/v1/apps', { user: 'nobody-dryrun' });
    expect(list.body.apps).toEqual([]);
  });

  it('lists 120 apps page by page, newest first, without gaps or duplicates', async () => {
    const user = 'pager';
    const handles: string[] = [];
    for (let batchStart = 0; batchStart < 120; batchStart += 12) {
      const replies = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          call('POST', '/v1/apps', {
            body: { scheduler: 'local_cwd', component: 'utils.echo', args: ['--msg', `n${batchStart + i}`] },
            user,
          }),
        ),
      );
      for (const r of replies) {
        expect(r.status).toBe(201);
        handles.push(String(r.body.handle));
      }
    }
    const seen: string[] = [];
    const pageSizes: number[] = [];
    let token: string | undefined;
    do {
      const reply = await call(
        'GET',
        `/v1/apps?limit=50${token ? `&nextToken=${encodeURIComponent(token)}` : ''}`,
        { user },
      );
      expect(reply.status).toBe(200);
      const apps = reply.body.apps as { handle: string; createdAt: string }[];
      pageSizes.push(apps.length);
      seen.push(...apps.map((a) => a.handle));
      token = reply.body.nextToken as string | undefined;
    } while (token);
    expect(pageSizes).toEqual([50, 50, 20]);
    expect(new Set(seen).size).toBe(120);
    expect([...seen].sort()).toEqual([...handles].sort());

    const filtered = await call('GET', '/v1/apps?state=RUNNING&state=PENDING&scheduler=local_cwd&limit=100', {
      user,
    });
    for (const app of filtered.body.apps as { state: string }[])
      expect(['RUNNING', 'PENDING']).toContain(app.state);
    const badLimit = await call('GET', '/v1/apps?limit=0', { user });
    expect(badLimit.status).toBe(400);
    expect(badLimit.body.error).toMatchObject({ details: [{ path: 'limit' }] });
  });

  it('describes schedulers and components', async () => {
    const schedulers = await call('GET', '/v1/schedulers');
    expect((schedulers.body.schedulers as { name: string }[]).map((s) => s.name)).toEqual([
      'local_cwd',
      'aws_batch',
      'aws_sagemaker',
      'local_docker',
      'lsf',
      'kubernetes',
      'kubernetes_mcad',
    ]);
    const components = await call('GET', '/v1/components');
    expect((components.body.components as { name: string }[]).map((c) => c.name)).toContain('dist.ddp');
  });

  it('answers dry runs of the dry-run-only schedulers with their native request over HTTP', async () => {
    const echo = { component: 'utils.echo', args: ['--msg', 'hi'] };
    const lsf = await call('POST', '/v1/dryrun', {
      body: { scheduler: 'lsf', ...echo, cfg: { jobdir: '/j' } },
    });
    expect(lsf.status).toBe(200);
    expect((lsf.body.request as { script: string }).script).toMatch(/^#!\/bin\/bash\n[\s\S]*bsub -P echo-/);
    const k8s = await call('POST', '/v1/dryrun', {
      body: { scheduler: 'kubernetes', ...echo, cfg: { queue: 'q' } },
    });
    expect(k8s.status).toBe(200);
    expect((k8s.body.request as { resource: { kind: string } }).resource.kind).toBe('Job');
    const mcad = await call('POST', '/v1/dryrun', { body: { scheduler: 'kubernetes_mcad', ...echo } });
    expect((mcad.body.request as { resource: { kind: string } }).resource.kind).toBe('AppWrapper');
    const docker = await call('POST', '/v1/dryrun', { body: { scheduler: 'local_docker', ...echo } });
    expect((docker.body.request as { containers: unknown[] }).containers).toHaveLength(1);
    const noQueue = await call('POST', '/v1/dryrun', { body: { scheduler: 'kubernetes', ...echo } });
    expect(noQueue.status).toBe(400);
    expect(JSON.stringify(noQueue.body)).toContain('queue');
  });

  it('refuses to run on a dry-run-only scheduler with a 400 and records nothing', async () => {
    const run = await call('POST', '/v1/apps', {
      body: { scheduler: 'kubernetes', component: 'utils.echo', args: ['--msg', 'hi'], cfg: { queue: 'q' } },
      user: 'dry-only',
    });
    expect(run.status).toBe(400);
    expect(JSON.stringify(run.body)).toContain('dry runs only');
    const list = await call('GET', '/v1/apps', { user: 'dry-only' });
    expect(list.body.apps).toEqual([]);
  });
});
