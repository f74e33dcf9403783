/**
 * End to end: `txs run --workspace DIR` against the real local server (local_cwd, in-memory store): the CLI
 * packs the directory, uploads it once by content, and the job runs in the server's own copy of it.
 */
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExitCode } from '../../lib/cli/index.js';
import type { LocalServer } from '../../lib/local/server.js';
import { validateResponses } from '../helpers/openapi-validator.js';
import { runTxs } from '../helpers/real-time-cli.js';
import { tarGzOf } from '../helpers/workspace-archives.js';

let server: LocalServer;
let dataDir: string;
let home: string;
/** Every request the CLI sent, as `METHOD path`. */
const sent: string[] = [];
/** The JSON bodies of the dry runs the CLI sent. */
const dryruns: Array<{ workspace?: { sha256: string } }> = [];

const { transport: validating } = validateResponses(() => server?.url);

beforeAll(async () => {
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
  dataDir = await mkdtemp(join(tmpdir(), 'txs-workspace-e2e-'));
  home = join(dataDir, 'home');
  await mkdir(home);
  const { startLocalServer } = await import('../../lib/local/server.js');
  server = await startLocalServer({
    port: 0,
    dataDir: join(dataDir, 'server'),
    inMemory: true,
    reconcileEveryMs: 0,
    tokenFile: join(dataDir, 'run', 'server.token'),
  });
});

afterAll(async () => {
  await server?.close();
  await rm(dataDir, { recursive: true, force: true });
});

function txs(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  return txsIn(dataDir, ...args);
}

/** `txs` run from the directory `cwd`. */
function txsIn(cwd: string, ...args: string[]): Promise<{ code: number; out: string; err: string }> {
  return runTxs(args, {
    env: { TXS_ENDPOINT: server.url, TXS_USER: 'workspace-e2e', TXS_LOCAL_TOKEN_FILE: server.tokenFile },
    cwd,
    homeDir: home,
    transport: async (exchange) => {
      sent.push(`${exchange.method} ${exchange.url.pathname}`);
      if (exchange.url.pathname === '/v1/dryrun' && typeof exchange.body === 'string') {
        dryruns.push(JSON.parse(exchange.body) as { workspace?: { sha256: string } });
      }
      return validating(exchange);
    },
  });
}

/** A new source directory holding `files`. */
async function sourceDir(name: string, files: Record<string, string>): Promise<string> {
  const dir = join(dataDir, name);
  await mkdir(dir);
  for (const [file, text] of Object.entries(files)) await writeFile(join(dir, file), text);
  return dir;
}

/** A raw request to the server with its token (as any client of the same user). */
function api(
  method: string,
  path: string,
  init: { body?: Uint8Array | string; headers?: Record<string, string> } = {},
) {
  return fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${server.token}`, ...init.headers },
    ...(init.body === undefined ? {} : { body: init.body }),
  });
}

/** Uploads `body` as a workspace archive; returns its SHA-256. */
async function upload(body: Buffer): Promise<string> {
  const sha256 = createHash('sha256').update(body).digest('hex');
  const answer = await api('PUT', `/v1/workspaces/${sha256}`, { body });
  expect(answer.status).toBe(201);
  return sha256;
}

/** The archives the server holds. */
async function storedArchives(): Promise<string[]> {
  return readdir(join(server.dataDir, 'workspaces', 'archives')).catch(() => []);
}

describe('txs run --workspace (local_cwd)', () => {
  it('runs the job in a snapshot of the directory: an edit after submitting is not seen, and describe and status name the archive', async () => {
    const src = await sourceDir('snapshot', { 'data.txt': 'original\n' });
    const go = join(dataDir, 'go-snapshot');
    // The job waits until the test has edited the source, then reads its own copy.
    const script = `while [ ! -f ${go} ]; do sleep 0.05; done; cat data.txt`;
    const run = await txs('run', '--workspace', src, 'utils.sh', 'sh', '-c', script);
    expect(run.code, run.err).toBe(ExitCode.OK);
    const handle = run.out.trim();
    await writeFile(join(src, 'data.txt'), 'edited after submitting\n');
    await writeFile(go, '');
    const waited = await txs('wait', handle);
    expect(waited.code, waited.err).toBe(ExitCode.OK);
    expect((await txs('log', handle)).out).toBe('original\n');

    const described = await txs('describe', '--json', handle);
    const app = JSON.parse(described.out) as {
      workspace: { sha256: string; size: number; fileCount: number };
    };
    expect(app.workspace.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(app.workspace.fileCount).toBe(1);
    // The run's copy is the server's business: cfg.cwd is not set to it, and no path names it.
    expect(described.out).not.toMatch(/workspaces\//);
    expect(await storedArchives()).toContain(`${app.workspace.sha256}.tar.gz`);
    expect((await txs('describe', handle)).out).toContain(`# workspace: ${app.workspace.sha256} (1 file,`);
    expect((await txs('status', handle)).out).toContain(`workspace: ${app.workspace.sha256}`);
  });

  it('uploads nothing when the server already holds the archive: one POST /v1/workspaces, no bytes', async () => {
    const src = await sourceDir('twice', { 'run.sh': 'echo twice\n' });
    sent.length = 0;
    const first = await txs('run', '--wait', '--workspace', src, 'utils.sh', 'sh', 'run.sh');
    expect(first.code, first.err).toBe(ExitCode.OK);
    expect(first.err).toContain('uploaded workspace');
    const workspaceRequests = () => sent.filter((request) => request.includes('/v1/workspaces'));
    expect(workspaceRequests()).toEqual([
      'POST /v1/workspaces',
      expect.stringMatching(/^PUT \/v1\/workspaces\/[0-9a-f]{64}$/),
    ]);
    sent.length = 0;
    const second = await txs('run', '--wait', '--workspace', src, 'utils.sh', 'sh', 'run.sh');
    expect(second.code, second.err).toBe(ExitCode.OK);
    expect(workspaceRequests()).toEqual(['POST /v1/workspaces']);
    expect((await txs('log', second.out.trim())).out).toBe('twice\n');
  });

  it('shows the archive in a dry run, names it in the dry run request, and uploads nothing', async () => {
    const src = await sourceDir('dry', { 'big.bin': 'x'.repeat(5000), 'small.txt': 'y' });
    sent.length = 0;
    dryruns.length = 0;
    const dry = await txs('run', '--dryrun', '--workspace', src, 'utils.sh', 'true');
    expect(dry.code, dry.err).toBe(ExitCode.OK);
    expect(dry.out).toMatch(/workspace: [0-9a-f]{64}\n {2}2 files/);
    expect(dry.out).toMatch(/largest:\n +4\.9 KiB {2}big\.bin/);
    expect(dry.err).toContain(`workspace: packing ${src}\n`);
    expect(sent.filter((request) => !request.startsWith('POST /v1/dryrun'))).toEqual([]);
    const sha256 = /workspace: ([0-9a-f]{64})/.exec(dry.out)?.[1];
    expect(dryruns).toEqual([expect.objectContaining({ workspace: { sha256 } })]);
  });

  it('takes --workspace "" as none, as TorchX does: the job runs in the caller\'s directory and nothing is sent', async () => {
    sent.length = 0;
    const run = await txs('run', '--wait', '--workspace', '', 'utils.sh', 'pwd');
    expect(run.code, run.err).toBe(ExitCode.OK);
    expect((await txs('log', run.out.trim())).out).toBe(`${dataDir}\n`);
    expect(sent.filter((request) => request.includes('/v1/workspaces/'))).toEqual([]);
  });

  it('refuses a workspace for a scheduler that cannot take one, before packing or sending anything', async () => {
    sent.length = 0;
    const run = await txs('run', '-s', 'lsf', '--workspace', join(dataDir, 'missing'), 'utils.echo');
    expect(run.code).toBe(ExitCode.USAGE);
    expect(run.err).toContain('the lsf scheduler cannot take a workspace');
    expect(run.err).toContain('hint: run without one: --workspace ""');
    expect(sent).toEqual([]);
  });
});

describe('txs run: the default workspace', () => {
  it('is the current directory for a scheduler that runs an image, named on stderr with how to turn it off', async () => {
    const project = await sourceDir('default-project', { 'train.py': 'print(1)\n' });
    dryruns.length = 0;
    sent.length = 0;
    const dry = await txsIn(project, 'run', '--dryrun', '-s', 'local_docker', 'utils.echo');
    expect(dry.code, dry.err).toBe(ExitCode.OK);
    expect(dry.err).toContain(
      `workspace: packing ${project} (the current directory, the default workspace for local_docker; --workspace "" runs without it)`,
    );
    const sha256 = /workspace: ([0-9a-f]{64})\n {2}1 files?/.exec(dry.out)?.[1];
    expect(sha256).toBeDefined();
    expect(dryruns).toEqual([expect.objectContaining({ scheduler: 'local_docker', workspace: { sha256 } })]);
    expect(sent.filter((request) => request.includes('/v1/workspaces/'))).toEqual([]);
  });

  it('is none for local_cwd and for a scheduler that takes none, without an error', async () => {
    const project = await sourceDir('default-none', { 'train.py': 'print(1)\n' });
    dryruns.length = 0;
    for (const scheduler of ['local_cwd', 'lsf']) {
      const dry = await txsIn(project, 'run', '--dryrun', '-s', scheduler, 'utils.echo');
      expect(dry.err).not.toContain('workspace: packing');
    }
    expect(dryruns.filter((body) => body.workspace !== undefined)).toEqual([]);
  });
});

describe('txs run --workspace sha256:<hex>', () => {
  it('runs again in the archive of an earlier run, whatever the directory holds now, uploading nothing', async () => {
    const src = await sourceDir('rerun', { 'data.txt': 'first\n' });
    const first = await txs('run', '--wait', '--workspace', src, 'utils.sh', 'cat', 'data.txt');
    expect(first.code, first.err).toBe(ExitCode.OK);
    const { workspace } = JSON.parse((await txs('describe', '--json', first.out.trim())).out) as {
      workspace: { sha256: string };
    };
    await writeFile(join(src, 'data.txt'), 'edited since\n');
    sent.length = 0;
    const again = await txs(
      'run',
      '--wait',
      '--workspace',
      `sha256:${workspace.sha256}`,
      'utils.sh',
      'cat',
      'data.txt',
    );
    expect(again.code, again.err).toBe(ExitCode.OK);
    expect(again.err).not.toContain('packing');
    expect(sent.filter((request) => request.includes('/v1/workspaces/'))).toEqual([]);
    expect((await txs('log', again.out.trim())).out).toBe('first\n');
    const described = JSON.parse((await txs('describe', '--json', again.out.trim())).out) as {
      workspace: { sha256: string };
    };
    expect(described.workspace.sha256).toBe(workspace.sha256);
  });

  it('is refused by the server, naming workspace.sha256, when it does not hold the archive', async () => {
    const run = await txs('run', '--workspace', `sha256:${'e'.repeat(64)}`, 'utils.echo');
    expect(run.code).toBe(ExitCode.USAGE);
    expect(run.err).toContain('workspace.sha256');
  });
});

describe('txs workspace DIR', () => {
  it('uploads the archive once and prints its summary as JSON, the archive a run with the same directory records', async () => {
    const src = await sourceDir('pushed', { 'train.py': 'print(1)\n', 'conf.yaml': 'a: 1\n' });
    const first = await txs('workspace', '--json', src);
    expect(first.code, first.err).toBe(ExitCode.OK);
    const pushed = JSON.parse(first.out) as {
      sha256: string;
      size: number;
      fileCount: number;
      uploaded: boolean;
    };
    expect(pushed).toMatchObject({ fileCount: 2, uploaded: true });
    expect(await storedArchives()).toContain(`${pushed.sha256}.tar.gz`);

    sent.length = 0;
    const again = await txs('workspace', '--json', src);
    expect(JSON.parse(again.out)).toEqual({ ...pushed, uploaded: false });
    expect(sent.filter((request) => request.startsWith('PUT '))).toEqual([]);

    const run = await txs('run', '--wait', '--workspace', src, 'utils.sh', 'true');
    expect(run.code, run.err).toBe(ExitCode.OK);
    const described = JSON.parse((await txs('describe', '--json', run.out.trim())).out) as {
      workspace: { sha256: string; size: number; fileCount: number };
    };
    expect(described.workspace).toEqual({ sha256: pushed.sha256, size: pushed.size, fileCount: 2 });
  });

  it('packs without uploading with --dryrun, listing the largest files', async () => {
    const src = await sourceDir('pushed-dry', { 'weights.bin': 'w'.repeat(3000) });
    sent.length = 0;
    const dry = await txs('workspace', '--dryrun', src);
    expect(dry.code, dry.err).toBe(ExitCode.OK);
    expect(dry.out).toMatch(/largest:\n +2\.9 KiB {2}weights\.bin/);
    expect(sent).toEqual([]);
  });

  it('refuses -s naming a scheduler that takes no workspace, before packing or sending anything', async () => {
    sent.length = 0;
    const refused = await txs('workspace', '-s', 'lsf', join(dataDir, 'missing'));
    expect(refused.code).toBe(ExitCode.USAGE);
    expect(refused.err).toContain('the lsf scheduler cannot take a workspace (txs workspace -s lsf)');
    expect(refused.err).not.toContain('missing');
    expect(sent).toEqual([]);
  });

  it('refuses a missing directory with a usage error naming it, sending nothing', async () => {
    sent.length = 0;
    const missing = await txs('workspace', join(dataDir, 'nowhere'));
    expect(missing.code).toBe(ExitCode.USAGE);
    expect(missing.err).toContain('nowhere');
    expect(sent).toEqual([]);
  });
});

describe('PUT /v1/workspaces/{sha256}', () => {
  it('refuses a body whose SHA-256 is not the one named, with 400 naming the checksum, and stores nothing', async () => {
    const before = await storedArchives();
    const body = new TextEncoder().encode('not what the name says');
    const wrong = createHash('sha256').update('something else').digest('hex');
    const answer = await api('PUT', `/v1/workspaces/${wrong}`, { body });
    expect(answer.status).toBe(400);
    const error = ((await answer.json()) as { error: { code: string; details: Array<{ path: string }> } })
      .error;
    expect(error.code).toBe('ChecksumMismatch');
    expect(error.details[0]?.path).toBe('checksum');
    expect(await storedArchives()).toEqual(before);
    expect((await api('HEAD', `/v1/workspaces/${wrong}`)).status).toBe(404);
  });
});

describe('PUT /v1/workspaces/{sha256} of an unsafe archive', () => {
  it('refuses an archive with an entry that would land outside its directory, with 400 naming the body, and stores nothing', async () => {
    const body = await tarGzOf([{ name: 'escape', type: 'symlink', linkname: '../../outside' }]);
    const sha256 = createHash('sha256').update(body).digest('hex');
    const answer = await api('PUT', `/v1/workspaces/${sha256}`, { body });
    expect(answer.status).toBe(400);
    const error = ((await answer.json()) as { error: { message: string; details: Array<{ path: string }> } })
      .error;
    expect(error.details[0]?.path).toBe('body');
    expect(error.message).toContain('symlink escape points out of the workspace');
    expect((await api('HEAD', `/v1/workspaces/${sha256}`)).status).toBe(404);
    expect(await storedArchives()).not.toContain(`${sha256}.tar.gz`);
  });
});

describe('POST /v1/apps with a workspace and an Idempotency-Key', () => {
  it('gives a retry the app (and so the copy) of the first attempt', async () => {
    const sha256 = await upload(await tarGzOf([{ name: 'run.sh', body: 'echo retried\n', mode: 0o755 }]));
    const post = () =>
      api('POST', '/v1/apps', {
        headers: { 'content-type': 'application/json', 'idempotency-key': 'workspace-retry-1' },
        body: JSON.stringify({
          scheduler: 'local_cwd',
          app: {
            name: 'retried',
            roles: [{ name: 'main', image: '.', entrypoint: 'sh', args: ['run.sh'] }],
          },
          workspace: { sha256 },
        }),
      });
    const first = await post();
    expect(first.status, await first.clone().text()).toBe(201);
    const again = await post();
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const { appId } = (await first.json()) as { appId: string };
    expect(((await again.json()) as { appId: string }).appId).toBe(appId);
    let state = '';
    for (let i = 0; i < 200 && state !== 'SUCCEEDED'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      const got = (await (await api('GET', `/v1/apps/local_cwd/${appId}`)).json()) as {
        status: { state: string };
      };
      state = got.status.state;
    }
    expect(state).toBe('SUCCEEDED');
    const copies = await readdir(join(server.dataDir, 'local_cwd', '.workspaces'));
    expect(copies.filter((name) => name.startsWith('retried-'))).toEqual([appId]);
  });
});

describe('PUT /v1/workspaces/{sha256} without a length', () => {
  it('answers 411 naming Content-Length to a chunked body, and stores nothing', async () => {
    const before = await storedArchives();
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('chunked'));
        controller.close();
      },
    });
    const answer = await fetch(`${server.url}/v1/workspaces/${'d'.repeat(64)}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${server.token}` },
      body,
      duplex: 'half',
    } as RequestInit);
    expect(answer.status).toBe(411);
    const error = ((await answer.json()) as { error: { details: Array<{ path: string }> } }).error;
    expect(error.details[0]?.path).toBe('Content-Length');
    expect(await storedArchives()).toEqual(before);
  });
});

describe('POST /v1/apps with a workspace', () => {
  it('refuses an archive the server does not hold with 400 naming workspace.sha256, and records nothing', async () => {
    const unknown = 'a'.repeat(64);
    const answer = await api('POST', '/v1/apps', {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        scheduler: 'local_cwd',
        component: 'utils.echo',
        args: ['--msg', 'never'],
        workspace: { sha256: unknown },
      }),
    });
    expect(answer.status).toBe(400);
    const error = ((await answer.json()) as { error: { message: string; details: Array<{ path: string }> } })
      .error;
    expect(error.details[0]?.path).toBe('workspace.sha256');
    expect(error.message).toContain(`PUT /v1/workspaces/${unknown}`);
    const list = (await (await api('GET', '/v1/apps?limit=100')).json()) as { apps: Array<{ name: string }> };
    expect(list.apps.filter((a) => a.name === 'echo')).toEqual([]);
  });

  it('refuses cfg.cwd together with a workspace, naming cfg.cwd', async () => {
    const sha256 = await upload(await tarGzOf([{ name: 'a.txt', body: 'a' }]));
    const answer = await api('POST', '/v1/apps', {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        scheduler: 'local_cwd',
        component: 'utils.echo',
        cfg: { cwd: dataDir },
        workspace: { sha256 },
      }),
    });
    expect(answer.status).toBe(400);
    const error = ((await answer.json()) as { error: { details: Array<{ path: string }> } }).error;
    expect(error.details[0]?.path).toBe('cfg.cwd');
  });

  it('refuses a workspace for a scheduler that cannot take one, naming the scheduler', async () => {
    const answer = await api('POST', '/v1/apps', {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        scheduler: 'lsf',
        component: 'utils.echo',
        workspace: { sha256: 'b'.repeat(64) },
      }),
    });
    expect(answer.status).toBe(400);
    expect(((await answer.json()) as { error: { message: string } }).error.message).toContain(
      'the lsf scheduler cannot take a workspace yet',
    );
  });
});
