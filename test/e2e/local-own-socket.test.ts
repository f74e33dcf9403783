/**
 * Secrets go only to the caller's own server. Another OS user (played by a plain HTTP server in this test)
 * has bound `[::1]:PORT` while the real local server listens on `127.0.0.1:PORT`, and `localhost` resolves to
 * `::1` first: `txs` must reach the real server through its own Unix socket, and the squatter must receive
 * neither the server's token nor any of the caller's environment — whatever `localhost` resolves to.
 */

import { execFileSync } from 'node:child_process';
import dns from 'node:dns';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { type AddressInfo, createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ExitCode } from '../../lib/cli/index.js';
import { DataDirError } from '../../lib/local/private-files.js';
import type { LocalServer } from '../../lib/local/server.js';
import { runTxs } from '../helpers/real-time-cli.js';

const SECRET = 'wJalrXUtnFEMI-K7MDENG-not-for-squatters';
let root: string;
let server: LocalServer;
let squatter: Server;
const squatted: { method: string; url: string; headers: IncomingHttpHeaders; body: string }[] = [];

beforeAll(async () => {
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
  root = mkdtempSync(join(tmpdir(), 'txs-own-socket-'));
  const { startLocalServer } = await import('../../lib/local/server.js');
  server = await startLocalServer({
    port: 0,
    dataDir: join(root, 'data'),
    inMemory: true,
    reconcileEveryMs: 0,
    tokenFile: join(root, 'private', 'server.token'),
    // Over TCP every client looks like another OS user: only the token or the own socket admits.
    readProcNet: async () => [],
  });
  squatter = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      squatted.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      });
      res.writeHead(req.method === 'POST' ? 201 : 200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ handle: 'local_cwd://torchx/squatted-1', appId: 'squatted-1', url: '/x' }));
    });
  });
  await new Promise<void>((resolve) => squatter.listen(server.port, '::1', resolve));
  // `localhost` resolves to ::1 first, as on many machines.
  const lookup = dns.lookup;
  vi.spyOn(dns, 'lookup').mockImplementation(((host: string, options: unknown, callback: unknown) => {
    if (host !== 'localhost') return (lookup as (...a: unknown[]) => void)(host, options, callback);
    const done = (typeof options === 'function' ? options : callback) as (...a: unknown[]) => void;
    const all = typeof options === 'object' && (options as { all?: boolean }).all === true;
    if (all) {
      done(null, [
        { address: '::1', family: 6 },
        { address: '127.0.0.1', family: 4 },
      ]);
    } else done(null, '::1', 6);
  }) as typeof dns.lookup);
});

afterAll(async () => {
  vi.restoreAllMocks();
  await new Promise((resolve) => squatter?.close(resolve));
  await server?.close();
  rmSync(root, { recursive: true, force: true });
});

/** Runs txs in-process, in real time, with `env` as the caller's environment. */
function txs(env: Record<string, string>, ...args: string[]) {
  return runTxs(args, { env, cwd: root, homeDir: root, maxSleepMs: 100 });
}

/** What the caller has: the endpoint by the name `localhost`, the token file's place, and a secret. */
function callerEnv(): Record<string, string> {
  return {
    TXS_ENDPOINT: `http://localhost:${server.port}`,
    TXS_LOCAL_TOKEN_FILE: server.tokenFile,
    AWS_SECRET_ACCESS_KEY: SECRET,
  };
}

function expectNothingSecretSquatted(): void {
  const seen = JSON.stringify(squatted);
  expect(seen).not.toContain(server.token);
  expect(seen).not.toContain(SECRET);
  expect(squatted.filter((r) => r.headers.authorization !== undefined)).toEqual([]);
}

describe('txs and a squatter on [::1]:PORT', () => {
  it('runs on the real server through its own socket, with the environment, and sends the squatter nothing', async () => {
    expect(server.socketFile).toBe(join(root, 'private', `${server.port}.sock`));
    // Old clients read the token from here by themselves.
    vi.stubEnv('TXS_LOCAL_TOKEN_FILE', server.tokenFile);
    try {
      const run = await txs(
        callerEnv(),
        'run',
        '--wait',
        'utils.sh',
        'sh',
        '-c',
        'echo "key=$AWS_SECRET_ACCESS_KEY"',
      );
      expect(run.err).not.toContain('warning');
      expect(run.code).toBe(ExitCode.OK);
      const log = await txs(callerEnv(), 'log', run.out.trim());
      expect(log.out).toBe(`key=${SECRET}\n`);
    } finally {
      vi.unstubAllEnvs();
    }
    expect(squatted).toEqual([]);
  });

  it('gives txs ui a dashboard link through the socket, and the squatter nothing', async () => {
    const ui = await txs(callerEnv(), 'ui');
    expect(ui.code).toBe(ExitCode.OK);
    expect(ui.out).toMatch(new RegExp(`http://127\\.0\\.0\\.1:${server.port}/\\?token=`));
    expect(squatted).toEqual([]);
  });

  it('sends neither the token nor the environment over TCP when the socket is not proven its own', async () => {
    // The socket's directory opened to the group: the socket no longer proves anything.
    chmodSync(dirname(server.tokenFile), 0o750);
    vi.stubEnv('TXS_LOCAL_TOKEN_FILE', server.tokenFile);
    try {
      const run = await txs(callerEnv(), 'run', 'utils.sh', 'true');
      expect(run.err).toContain(
        `warning: http://localhost:${server.port} is not proven to be your own local server`,
      );
      const withEnv = await txs(callerEnv(), 'run', '-cfg', `env=KEY:${SECRET}`, 'utils.sh', 'true');
      expect(withEnv.code).toBe(ExitCode.USAGE);
      const ui = await txs(callerEnv(), 'ui');
      expect(ui.code).toBe(ExitCode.USAGE);
      expect(ui.err).toContain('cannot ask');
    } finally {
      vi.unstubAllEnvs();
      chmodSync(dirname(server.tokenFile), 0o700);
    }
    const posts = squatted.filter((r) => r.method === 'POST');
    expect(posts).toHaveLength(1);
    expect(JSON.parse(posts[0]?.body ?? '{}')).toEqual({
      scheduler: 'local_cwd',
      component: 'utils.sh',
      args: ['true'],
    });
    expectNothingSecretSquatted();
  });
});

/** A port nothing listens on now. */
async function freePort(): Promise<number> {
  const probe = createNetServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

describe('the local server’s own socket', () => {
  async function start(dir: string, port: number): Promise<LocalServer> {
    const { startLocalServer } = await import('../../lib/local/server.js');
    return startLocalServer({
      port,
      dataDir: join(dir, 'data'),
      inMemory: true,
      reconcileEveryMs: 0,
      tokenFile: join(dir, 'run', 'server.token'),
    });
  }

  it('replaces a socket left by a killed server, and removes its own on close', async () => {
    const dir = mkdtempSync(join(root, 'stale-'));
    const port = await freePort();
    const file = join(dir, 'run', `${port}.sock`);
    mkdirSync(dirname(file), { mode: 0o700 });
    // A socket bound by a process that is gone: the file stays, nothing answers.
    execFileSync('python3', [
      '-c',
      'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])',
      file,
    ]);
    expect(existsSync(file)).toBe(true);
    const next = await start(dir, port);
    expect(next.socketFile).toBe(file);
    await next.close();
    expect(existsSync(file)).toBe(false);
  });

  it('refuses to start over a live socket or a file that is not a socket, and keeps them', async () => {
    const dir = mkdtempSync(join(root, 'busy-'));
    const port = await freePort();
    const file = join(dir, 'run', `${port}.sock`);
    mkdirSync(dirname(file), { mode: 0o700 });
    writeFileSync(file, 'not a socket');
    await expect(start(dir, port)).rejects.toThrow(DataDirError);
    await expect(start(dir, port)).rejects.toThrow(/is in the way of the local server's socket/);
    rmSync(file);
    const live = createNetServer();
    await new Promise<void>((resolve) => live.listen(file, resolve));
    try {
      await expect(start(dir, port)).rejects.toThrow(/another local server listens on/);
      expect(existsSync(file)).toBe(true);
    } finally {
      await new Promise((resolve) => live.close(resolve));
    }
  });

  it('has no socket where its directory is open to other users, and says why', async () => {
    const dir = mkdtempSync(join(root, 'shared-'));
    mkdirSync(join(dir, 'run'), { mode: 0o755 });
    chmodSync(join(dir, 'run'), 0o755);
    const shared = await start(dir, 0);
    try {
      expect(shared.socketFile).toBeUndefined();
      expect(shared.socketSkipped).toMatch(/open to other users/);
    } finally {
      await shared.close();
    }
  });
});
