/**
 * End to end over real HTTP against the local server (`npm start`'s server): dynalite in-process, the
 * local_cwd scheduler running real processes, and the same handlers the stack deploys.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalServer } from '../../lib/local/server.js';
import { validateResponses } from '../helpers/openapi-validator.js';

let server: LocalServer;
let dataDir: string;

// Every response these tests receive must match docs/openapi.json.
validateResponses(() => server?.url);

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

  it("runs a job in the caller's cwd with the caller's env, never recording its values or the server's vars", async () => {
    const callerDir = mkdtempSync(join(tmpdir(), 'txs-e2e-caller-'));
    process.env.TXS_E2E_SERVER_ONLY = 'server';
    try {
      const secret = 'wJalrXUtnFEMI-e2e-secret';
      const script =
        'pwd; echo "$FROM_CALLER $LOGLEVEL ${TXS_E2E_SERVER_ONLY:-unset} ${AWS_SECRET_ACCESS_KEY:+set}"';
      const env = {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        FROM_CALLER: 'caller',
        LOGLEVEL: 'INFO',
        AWS_SECRET_ACCESS_KEY: secret,
      };
      const body = {
        scheduler: 'local_cwd',
        component: 'utils.sh',
        args: ['sh', '-c', script],
        cfg: { cwd: callerDir, env },
      };
      const dry = await call('POST', '/v1/dryrun', { body });
      expect(dry.status).toBe(200);
      expect(JSON.stringify(dry.body)).not.toContain(secret);
      const run = await call('POST', '/v1/apps', { body });
      expect(run.status).toBe(201);
      expect(JSON.stringify(run.body)).not.toContain(secret);
      const appId = String(run.body.appId);
      const detail = await waitForState(appId, (s) => ['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(s));
      expect(JSON.stringify(detail)).not.toContain(secret);
      expect((detail.app as { roles: { env: Record<string, string> }[] }).roles[0]?.env.LOGLEVEL).toBe(
        'INFO',
      );
      const logs = await call('GET', `${appPath(appId)}/logs`);
      expect(logs.body.lines).toEqual([callerDir, 'caller INFO unset set']);

      // A plain curl (no env): only PATH, HOME and LANG of the server.
      const plain = await call('POST', '/v1/apps', {
        body: {
          scheduler: 'local_cwd',
          component: 'utils.sh',
          args: ['sh', '-c', 'echo "${TXS_E2E_SERVER_ONLY:-unset}"'],
        },
      });
      await waitForState(String(plain.body.appId), (s) => ['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(s));
      const plainLogs = await call('GET', `${appPath(String(plain.body.appId))}/logs`);
      expect(plainLogs.body.lines).toEqual(['unset']);
    } finally {
      delete process.env.TXS_E2E_SERVER_ONLY;
      rmSync(callerDir, { recursive: true, force: true });
    }
  });

  it('warns about a cfg key that is not a run option, with the closest name', async () => {
    const dry = await call('POST', '/v1/dryrun', {
      body: { scheduler: 'aws_batch', cfg: { queue: 'q', prioirty: 5 }, component: 'utils.echo' },
    });
    expect(dry.status).toBe(200);
    expect(dry.body.warnings).toEqual([
      '`prioirty` is not a run option of aws_batch; ignoring it; did you mean `priority`?',
    ]);
    const run = await call('POST', '/v1/apps', {
      body: { scheduler: 'local_cwd', cfg: { prepend_cwdd: true }, component: 'utils.echo' },
    });
    expect(run.status).toBe(201);
    expect(run.body.warnings).toEqual([
      '`prepend_cwdd` is not a run option of local_cwd; ignoring it; did you mean `prepend_cwd`?',
    ]);
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
      { body: { scheduler: 'no_such_scheduler', component: 'utils.echo' } },
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

  it('names an unknown scheduler in a list filter and in an app path, instead of answering no apps / unknown app', async () => {
    const list = await call('GET', '/v1/apps?scheduler=bogus');
    expect(list.status).toBe(400);
    expect(list.body.error).toMatchObject({ code: 'UnknownScheduler' });
    expect(JSON.stringify(list.body)).toContain('local_cwd');
    for (const [method, path] of [
      ['GET', '/v1/apps/bogus/x'],
      ['POST', '/v1/apps/bogus/x/cancel'],
      ['GET', '/v1/apps/bogus/x/logs'],
    ] as const) {
      const reply = await call(method, path);
      expect(reply.status).toBe(400);
      expect(reply.body.error).toMatchObject({ code: 'UnknownScheduler' });
    }
  });

  it('answers a cancel of a finished app without cancelRequestedAt, and of a live one with it', async () => {
    const done = await call('POST', '/v1/apps', {
      body: { scheduler: 'local_cwd', component: 'utils.echo' },
    });
    await waitForState(String(done.body.appId), (s) => s === 'SUCCEEDED');
    const late = await call('POST', `${appPath(String(done.body.appId))}/cancel`);
    expect(late.status).toBe(202);
    expect(late.body.state).toBe('SUCCEEDED');
    expect(late.body.cancelRequestedAt).toBeUndefined();
    const live = await call('POST', '/v1/apps', {
      body: { scheduler: 'local_cwd', component: 'utils.sh', args: ['sleep', '60'] },
    });
    await waitForState(String(live.body.appId), (s) => s === 'RUNNING');
    const cancel = await call('POST', `${appPath(String(live.body.appId))}/cancel`);
    expect(cancel.body.cancelRequestedAt).toEqual(expect.any(String));
  });

  it('quotes in a refused run option only what the caller gave, not the user name it fills in', async () => {
    const reply = await call('POST', '/v1/dryrun', {
      body: { scheduler: 'aws_batch', component: 'utils.echo' },
    });
    expect(reply.status).toBe(400);
    expect(reply.body.error).toMatchObject({
      code: 'InvalidRunConfig',
      message: 'Required run option: queue, must be provided and not `None`. Given: <EMPTY>',
    });
    // The filled-in user is still the caller's on a dry run that passes.
    const ok = await call('POST', '/v1/dryrun', {
      body: { scheduler: 'aws_batch', cfg: { queue: 'q' }, component: 'utils.echo' },
      user: 'carol',
    });
    expect(ok.status).toBe(200);
    expect(JSON.stringify(ok.body.request)).toContain('"torchx.pytorch.org/user":"carol"');
  });

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
    const noRoute = await call('GET', '/v2/nothing');
    expect(noRoute.status).toBe(404);
    expect(noRoute.body.error).toMatchObject({ code: 'RouteNotFound', requestId: expect.any(String) });
    const wrongMethod = await call('PUT', '/v1/apps');
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.body.error).toMatchObject({ code: 'MethodNotAllowed', requestId: expect.any(String) });
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
        args: [
          '-j',
          '2x8',
          '-h',
          'aws_p4d.24xlarge',
          '--image',
          '123456789012.dkr.ecr.us-east-1.amazonaws.com/torchx:latest',
          '--script',
          'train.py',
        ],
      },
    });
    expect(sm.status).toBe(200);
    const notEcr = await call('POST', '/v1/dryrun', {
      body: {
        scheduler: 'aws_sagemaker',
        cfg: { role: 'arn:aws:iam::123456789012:role/sm', output_path: 's3://bucket/out' },
        component: 'dist.ddp',
        args: ['-j', '1x1', '-h', 'aws_p4d.24xlarge', '--script', 'train.py'],
      },
    });
    expect(notEcr.status).toBe(400);
    expect(JSON.stringify(notEcr.body)).toContain('app.roles.0.image');
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
    // The counts per state cover all 120 (whatever state each echo has reached), and no one else's apps.
    const counts = await call('GET', '/v1/apps/counts?scheduler=local_cwd', { user });
    expect(counts.status).toBe(200);
    expect(counts.body).toMatchObject({ counted: 120, complete: true });
    expect(Object.values(counts.body.counts as Record<string, number>).reduce((a, b) => a + b, 0)).toBe(120);
    expect((await call('GET', '/v1/apps/counts', { user: 'nobody-counts' })).body).toEqual({
      counts: {},
      counted: 0,
      complete: true,
    });
    const badLimit = await call('GET', '/v1/apps?limit=0', { user });
    expect(badLimit.status).toBe(400);
    expect(badLimit.body.error).toMatchObject({ details: [{ path: 'limit' }] });
  });

  it("dry-runs slurm to TorchX's sbatch script and its slurmrestd request, and explains how to configure a run", async () => {
    const dry = await call('POST', '/v1/dryrun', {
      body: {
        scheduler: 'slurm',
        component: 'utils.echo',
        args: ['--msg', 'hi'],
        cfg: { partition: 'debug' },
      },
    });
    expect(dry.status).toBe(200);
    const request = dry.body.request as {
      script: string;
      slurmrestd: { path: string; body: { script: string } };
    };
    expect(request.script).toContain('#SBATCH --job-name=echo-0 --requeue --partition=debug');
    expect(request.slurmrestd.path).toBe('/slurm/v0.0.38/job/submit');
    expect(request.slurmrestd.body.script).toBe(request.script);
    const run = await call('POST', '/v1/apps', { body: { scheduler: 'slurm', component: 'utils.echo' } });
    expect(run.status).toBe(503);
    expect(JSON.stringify(run.body)).toContain('TXS_SLURM_URL');
  });

  it('describes schedulers and components', async () => {
    const schedulers = await call('GET', '/v1/schedulers');
    expect((schedulers.body.schedulers as { name: string }[]).map((s) => s.name)).toEqual([
      'local_cwd',
      'aws_batch',
      'aws_sagemaker',
      'slurm',
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
