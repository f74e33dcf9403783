/**
 * The slurm scheduler against a real Slurm cluster (munged, slurmctld, two slurmd pseudo-nodes, slurmrestd
 * with JWT auth; see cluster.ts), driven through the real local server over HTTP and the `txs` CLI: jobs run,
 * show PENDING/RUNNING/SUCCEEDED, logs and exit codes; a 2-node job, a heterogeneous (2-role) job, a cancel,
 * and the error mapping of slurmrestd's HTTP 500s. Run with `npm run test:slurm` (needs the Debian packages;
 * `.ci/run` installs them).
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExitCode, main } from '../../lib/cli/index.js';
import { packWorkspace } from '../../lib/cli/workspace/archive.js';
import type { LocalServer } from '../../lib/local/server.js';
import { BackendAccessDeniedError } from '../../lib/schedulers/errors.js';
import { SlurmRestClient, SlurmScheduler, signSlurmJwt } from '../../lib/schedulers/slurm/index.js';
import { parseAppDef } from '../../lib/specs/index.js';
import { memoryIO } from '../unit/cli/helpers.js';
import { removeCluster, type SlurmCluster, scontrolToken, startCluster } from './cluster.js';

let cluster: SlurmCluster;
let server: LocalServer;

beforeAll(async () => {
  cluster = await startCluster();
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
  process.env.TXS_SLURM_URL = cluster.url;
  process.env.TXS_SLURM_USER = cluster.user;
  process.env.TXS_SLURM_JWT_KEY_FILE = join(cluster.dir, 'jwt.key');
  process.env.TXS_SLURM_WORKDIR = cluster.jobsDir;
  const { startLocalServer } = await import('../../lib/local/server.js');
  server = await startLocalServer({
    port: 0,
    dataDir: join(cluster.dir, 'txs'),
    inMemory: true,
    reconcileEveryMs: 0,
    schedulers: ['slurm'],
  });
}, 90_000);

afterAll(async () => {
  await server?.close();
  if (cluster) {
    await cluster.stop();
    await removeCluster(cluster);
  }
}, 60_000);

async function call(method: string, path: string, body?: unknown) {
  const headers: Record<string, string> = { 'x-txs-user': 'slurm-e2e' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers,
    body: body === undefined ? null : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

interface Detail {
  state: string;
  msg: string;
  roles: { role: string; replicas: { id: number; state: string; hostname: string; exitCode?: number }[] }[];
}

/** Polls `?refresh=true` (the scheduler's describe) until `done` holds; returns every state seen. */
async function waitFor(appId: string, done: (d: Detail) => boolean, timeoutMs = 60_000) {
  const seen: string[] = [];
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { body } = await call('GET', `/v1/apps/slurm/${appId}?refresh=true`);
    const status = body.status as Detail;
    if (seen.at(-1) !== status.state) seen.push(status.state);
    if (done(status)) return { status, seen };
    if (Date.now() > deadline)
      throw new Error(`app ${appId} stuck in ${status.state} (seen ${seen.join(' → ')})`);
    await delay(250);
  }
}

const terminal = (d: Detail) => ['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(d.state);

async function logs(appId: string, role: string, replica: number, streams = 'stdout'): Promise<string[]> {
  const { status, body } = await call(
    'GET',
    `/v1/apps/slurm/${appId}/logs?role=${role}&replica=${replica}&streams=${streams}`,
  );
  expect(status).toBe(200);
  return body.lines as string[];
}

/** Runs txs in-process against the local server (no `--wait`: the suite polls itself, in real time). */
async function txs(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const io = memoryIO({
    env: { TXS_ENDPOINT: server.url, TXS_USER: 'slurm-e2e' },
    cwd: cluster.dir,
    home: cluster.dir,
  });
  const code = await main(args, io);
  return { code, out: io.out(), err: io.errText() };
}

function role(name: string, replicas: number, command: string, cpu = 1) {
  return {
    name,
    image: '/tmp',
    entrypoint: 'bash',
    args: ['-c', command],
    numReplicas: replicas,
    resource: { cpu, gpu: 0, memMB: 100 },
  };
}

describe('slurm on a real cluster', () => {
  it('accepts the HS256 tokens the client signs from the cluster key, as it accepts scontrol token', async () => {
    const now = Date.now();
    for (const token of [signSlurmJwt(cluster.jwtKey, cluster.user, now), await scontrolToken(cluster.env)]) {
      const response = await fetch(`${cluster.url}/slurm/v0.0.38/jobs`, {
        headers: { 'X-SLURM-USER-NAME': cluster.user, 'X-SLURM-USER-TOKEN': token },
      });
      expect(response.status).toBe(200);
    }
  });

  it('reports a token signed with another key as access denied (slurmrestd answers HTTP 500)', async () => {
    const client = new SlurmRestClient({
      url: cluster.url,
      user: cluster.user,
      auth: { jwtKey: Buffer.alloc(32, 7) },
    });
    await expect(client.jobs()).rejects.toBeInstanceOf(BackendAccessDeniedError);
    await expect(
      client.submit({
        script: '#!/bin/bash\ntrue\n',
        job: {
          name: 'x',
          requeue: false,
          wckey: 'x',
          current_working_directory: '/tmp',
          environment: { PATH: '/bin' },
        },
      }),
    ).rejects.toBeInstanceOf(BackendAccessDeniedError);
  });

  it('runs `txs run -s slurm utils.echo`: SUCCEEDED, with its stdout, exit code and host', async () => {
    const run = await txs('run', '-s', 'slurm', 'utils.echo', '--msg', 'hello from slurm');
    expect(run.code).toBe(ExitCode.OK);
    const handle = run.out.trim();
    expect(handle).toMatch(/^slurm:\/\/torchx\/echo-\w+$/);
    const appId = handle.slice('slurm://torchx/'.length);
    // `txs status --refresh` asks the cluster through the server
    let shown = '';
    for (let i = 0; i < 240 && !shown.includes('State: SUCCEEDED'); i++) {
      shown = (await txs('status', handle, '--refresh')).out;
      if (!shown.includes('State: SUCCEEDED')) await delay(250);
    }
    expect(shown).toContain('State: SUCCEEDED');
    const { status, seen } = await waitFor(appId, terminal);
    expect(status.state).toBe('SUCCEEDED');
    expect(seen.at(-1)).toBe('SUCCEEDED');
    expect(status.roles[0]?.replicas[0]).toMatchObject({ id: 0, state: 'SUCCEEDED', exitCode: 0 });
    expect(['n1', 'n2']).toContain(status.roles[0]?.replicas[0]?.hostname);
    expect(await logs(appId, 'echo', 0)).toEqual(['hello from slurm']);
    const log = await txs('log', `${handle}/echo/0`, '--streams', 'stdout');
    expect(log.out).toContain('hello from slurm');
    // the script slurmrestd ran is TorchX's text (its batch output echoes the srun line)
    const dry = await call('POST', '/v1/dryrun', {
      scheduler: 'slurm',
      component: 'utils.echo',
      args: ['--msg', 'x'],
    });
    expect((dry.body.request as { script: string }).script).toContain('# Generated by TorchX 0.8.0dev0');
  });

  it('reports a failing job as FAILED with its exit code, per replica and in the message', async () => {
    const run = await call('POST', '/v1/apps', {
      scheduler: 'slurm',
      app: { name: 'fails', roles: [role('sh', 1, 'echo oops >&2; exit 3')] },
    });
    expect(run.status).toBe(201);
    const appId = String(run.body.appId);
    const { status } = await waitFor(appId, terminal);
    expect(status.state).toBe('FAILED');
    expect(status.roles[0]?.replicas[0]?.exitCode).toBe(3);
    expect(await logs(appId, 'sh', 0, 'stderr')).toContain('oops');
    const describe = await call('GET', `/v1/apps/slurm/${appId}?refresh=true`);
    expect(JSON.stringify(describe.body)).toContain('exit code 3');
  });

  it('retries a failing job maxRetries times (TorchX requeues it from the script), then reports FAILED', async () => {
    const app = {
      name: 'retry',
      roles: [{ ...role('flaky', 1, 'echo attempt $SLURM_RESTART_COUNT; exit 4'), maxRetries: 1 }],
    };
    const run = await call('POST', '/v1/apps', { scheduler: 'slurm', app });
    const appId = String(run.body.appId);
    const { status } = await waitFor(appId, terminal, 90_000);
    expect(status.state).toBe('FAILED');
    expect(status.roles[0]?.replicas[0]?.exitCode).toBe(4);
    const detail = await call('GET', `/v1/apps/slurm/${appId}`);
    expect((detail.body.status as { numRestarts: number }).numRestarts).toBe(1);
  });

  it('runs a 2-node job: one replica per node', async () => {
    const run = await call('POST', '/v1/apps', {
      scheduler: 'slurm',
      app: { name: 'twonode', roles: [role('trainer', 2, 'echo rank $SLURM_PROCID on $SLURMD_NODENAME', 2)] },
    });
    const appId = String(run.body.appId);
    const { status } = await waitFor(appId, terminal);
    expect(status.state).toBe('SUCCEEDED');
    const replicas = status.roles[0]?.replicas ?? [];
    expect(replicas.map((r) => r.id)).toEqual([0, 1]);
    expect(replicas.map((r) => r.hostname).sort()).toEqual(['n1', 'n2']);
    expect((await logs(appId, 'trainer', 1))[0]).toMatch(/^rank 1 on n[12]$/);
  });

  it('runs a heterogeneous job of two roles, with per-role states and logs', async () => {
    const run = await call('POST', '/v1/apps', {
      scheduler: 'slurm',
      app: {
        name: 'hetero',
        roles: [
          role('ps', 1, 'echo ps says hi'),
          role('worker', 1, 'echo worker on $SLURM_JOB_NODELIST_HET_GROUP_0'),
        ],
      },
    });
    const appId = String(run.body.appId);
    const { status } = await waitFor(appId, terminal);
    expect(status.state).toBe('SUCCEEDED');
    expect(status.roles.map((r) => r.role)).toEqual(['ps', 'worker']);
    expect(await logs(appId, 'ps', 0)).toEqual(['ps says hi']);
    expect((await logs(appId, 'worker', 0))[0]).toMatch(/^worker on n[12]$/);
    const { body } = await call('GET', `/v1/apps/slurm/${appId}/logs?role=nope&streams=stdout`);
    expect(JSON.stringify(body)).toContain("Unknown role 'nope'");
  });

  it('shows PENDING while the cluster is full, RUNNING, and cancels a long job with `txs cancel`', async () => {
    const long = await call('POST', '/v1/apps', {
      scheduler: 'slurm',
      app: { name: 'long', roles: [role('sleeper', 2, 'echo started; sleep 300', 2)] },
    });
    const longId = String(long.body.appId);
    const running = await waitFor(longId, (d) => d.state === 'RUNNING');
    expect(running.status.roles[0]?.replicas.every((r) => r.state === 'RUNNING')).toBe(true);

    const queued = await call('POST', '/v1/apps', {
      scheduler: 'slurm',
      app: { name: 'queued', roles: [role('q', 1, 'echo finally', 2)] },
    });
    const queuedId = String(queued.body.appId);
    const pending = await waitFor(queuedId, (d) => d.state === 'PENDING');
    expect(pending.status.state).toBe('PENDING');

    const cancel = await txs('cancel', `slurm://torchx/${longId}`);
    expect(cancel.code).toBe(ExitCode.OK);
    const cancelled = await waitFor(longId, terminal);
    expect(cancelled.status.state).toBe('CANCELLED');
    const done = await waitFor(queuedId, terminal);
    expect(done.status.state).toBe('SUCCEEDED');
    expect(await logs(queuedId, 'q', 0)).toEqual(['finally']);
  });

  it('refuses an unknown partition with a 400 naming cfg.partition', async () => {
    const run = await call('POST', '/v1/apps', {
      scheduler: 'slurm',
      component: 'utils.echo',
      cfg: { partition: 'nope' },
    });
    expect(run.status).toBe(400);
    expect(JSON.stringify(run.body)).toContain('cfg.partition');
  });

  it('runs a job in its workspace: unpacked into job_dir before submitting, the job starts there and reads its files', async () => {
    // The Slurm user is the server's own OS user here (as on a user's machine): it writes into the job_dir
    // the server creates. The suite's server submits as `nobody`, so this drives the scheduler directly.
    const src = join(cluster.dir, 'ws-src');
    await mkdir(join(src, 'conf'), { recursive: true });
    await writeFile(join(src, 'train.sh'), 'echo "training with $(cat conf/lr.txt) in $(pwd)"\n');
    await writeFile(join(src, 'conf', 'lr.txt'), 'lr=0.1\n');
    const packed = await packWorkspace(src, { outDir: cluster.dir });
    const scheduler = new SlurmScheduler(
      { sessionName: 'torchx' },
      {
        client: new SlurmRestClient({ url: cluster.url, user: 'root', auth: { jwtKey: cluster.jwtKey } }),
        workDir: cluster.jobsDir,
      },
    );
    const jobDir = join(cluster.jobsDir, 'ws-run');
    const app = { name: 'ws', roles: [role('trainer', 2, 'bash train.sh', 2)] };
    const dryrun = scheduler.submitDryrun(
      parseAppDef(app),
      { job_dir: jobDir },
      { ...packed, archive: packed.path },
    );
    const appId = await scheduler.schedule(dryrun);
    // editing the source after submission changes nothing the job sees
    await writeFile(join(src, 'conf', 'lr.txt'), 'lr=0.9\n');
    let state = '';
    for (let i = 0; i < 240 && !['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(state); i++) {
      state = (await scheduler.describe(appId))?.state ?? '';
      if (state !== 'SUCCEEDED') await delay(250);
    }
    expect(state).toBe('SUCCEEDED');
    for (const replica of [0, 1]) {
      const page = await scheduler.readLogs(appId, { role: 'trainer', replica, streams: 'stdout' });
      expect(page.lines).toEqual([`training with lr=0.1 in ${jobDir}`]);
    }
  });

  it('lists the apps it ran from slurmctld, and the job output files are where TorchX puts them', async () => {
    const { body } = await call('GET', '/v1/apps?scheduler=slurm');
    expect((body.apps as unknown[]).length).toBeGreaterThan(0);
    const out = await readFile(join(cluster.jobsDir, 'slurm-1.out'), 'utf8');
    expect(out).toContain('job exited with code 0');
  });
});
