/**
 * The local server's admission rules over real HTTP: loopback Host/Origin only, then the token or the
 * client's OS user (from /proc/net/tcp, faked here to play another user), and its private files.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { TxsClient } from '../../lib/cli/client.js';
import { nodeHttpTransport } from '../../lib/cli/http-transport.js';
import { readProcNet } from '../../lib/local/access.js';
import { DataDirError, LOCK_FILE } from '../../lib/local/private-files.js';
import type { LocalServer } from '../../lib/local/server.js';
import { rawRequest } from '../helpers/raw-http.js';

let server: LocalServer;
let root: string;
let dataDir: string;
/** When set, /proc/net/tcp is rewritten so every client socket belongs to this uid (another OS user). */
let pretendUid: number | undefined;
/** The umask of this process before the server tightened it. */
let userUmask: number;
let originalUmask: number;

async function fakeProcNet(): Promise<string[]> {
  const tables = await readProcNet();
  if (pretendUid === undefined) return tables;
  const uid = pretendUid;
  return tables.map((table) =>
    table
      .split('\n')
      .map((line, i) => {
        if (i === 0 || line.trim() === '') return line;
        const fields = line.trim().split(/\s+/);
        fields[7] = String(uid);
        return fields.join(' ');
      })
      .join('\n'),
  );
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'txs-sec-'));
  dataDir = join(root, 'data');
  // A umask that is neither the usual 022 nor the server's 077, so the test shows which one replicas get.
  userUmask = 0o027;
  originalUmask = process.umask(userUmask);
  const { startLocalServer } = await import('../../lib/local/server.js');
  server = await startLocalServer({
    port: 0,
    dataDir,
    reconcileEveryMs: 0,
    tokenFile: join(root, 'private', 'server.token'),
    readProcNet: fakeProcNet,
  });
});
afterAll(async () => {
  await server?.close();
  process.umask(originalUmask);
  rmSync(root, { recursive: true, force: true });
});

/** A request with full control of the headers; the answer's JSON body parsed. */
async function raw(
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const reply = await rawRequest(server.port, method, path, headers, body);
  return {
    status: reply.status,
    body: reply.body ? (JSON.parse(reply.body) as Record<string, unknown>) : {},
  };
}

const own = () => `127.0.0.1:${server.port}`;

async function runSleep(): Promise<string> {
  const run = await raw(
    'POST',
    '/v1/apps',
    { host: own(), 'content-type': 'application/json' },
    JSON.stringify({ scheduler: 'local_cwd', component: 'utils.sh', args: ['sleep', '60'] }),
  );
  expect(run.status).toBe(201);
  return String(run.body.appId);
}

async function stateOf(appId: string): Promise<string> {
  const reply = await raw('GET', `/v1/apps/local_cwd/${appId}`, { host: own() });
  return (reply.body.status as { state: string }).state;
}

describe('local server admission', () => {
  it('refuses a run posted with a foreign Host (DNS rebinding): 403, and nothing runs', async () => {
    const marker = join(root, 'rebound');
    const reply = await raw(
      'POST',
      '/v1/apps',
      { host: `attacker.example:${server.port}`, 'content-type': 'application/json' },
      JSON.stringify({ scheduler: 'local_cwd', component: 'utils.sh', args: ['touch', marker] }),
    );
    expect(reply.status).toBe(403);
    expect(reply.body.error).toMatchObject({ code: 'Forbidden' });
    expect((reply.body.error as { message: string }).message).toContain('attacker.example');
    // A run that was accepted would have touched the file by now: prove the same request runs with our Host.
    const control = join(root, 'control');
    const ok = await raw(
      'POST',
      '/v1/apps',
      { host: own(), 'content-type': 'application/json' },
      JSON.stringify({ scheduler: 'local_cwd', component: 'utils.sh', args: ['touch', control] }),
    );
    expect(ok.status).toBe(201);
    for (let i = 0; i < 200 && (await stateOf(String(ok.body.appId))) !== 'SUCCEEDED'; i++) {
      await new Promise((r) => setTimeout(r, 25));
    }
    expect(existsSync(control)).toBe(true);
    expect(existsSync(marker)).toBe(false);
  });

  it('refuses a cross-origin text/plain POST to /cancel, and the app keeps running', async () => {
    const appId = await runSleep();
    const reply = await raw(
      'POST',
      `/v1/apps/local_cwd/${appId}/cancel`,
      { host: own(), origin: 'https://attacker.example', 'content-type': 'text/plain' },
      'x',
    );
    expect(reply.status).toBe(403);
    expect(reply.body.error).toMatchObject({ code: 'Forbidden' });
    expect(await stateOf(appId)).toBe('RUNNING');
    expect((await raw('POST', `/v1/apps/local_cwd/${appId}/cancel`, { host: own() })).status).toBe(202);
  });

  it.each([
    ['GET', '/v1/apps'],
    ['GET', '/v1/components'],
    ['DELETE', '/v1/apps/local_cwd/whatever-1'],
    ['GET', '/no/such/route'],
  ])('refuses %s %s with a foreign Host, body-less routes included', async (method, path) => {
    const reply = await raw(method, path, { host: `rebind.example:${server.port}` });
    expect(reply.status).toBe(403);
    expect(reply.body.error).toMatchObject({ code: 'Forbidden' });
  });

  it('admits a request from its own OS user without a token (the real /proc/net/tcp)', async () => {
    pretendUid = undefined;
    const reply = await raw('GET', '/v1/schedulers', { host: own() });
    expect(reply.status).toBe(200);
  });

  it('refuses another OS user without the token, with a 401 saying where the token is', async () => {
    pretendUid = (process.getuid?.() ?? 0) + 4242;
    try {
      const reply = await raw('GET', '/v1/schedulers', { host: own() });
      expect(reply.status).toBe(401);
      expect(reply.body.error).toMatchObject({ code: 'Unauthorized' });
      expect((reply.body.error as { message: string }).message).toContain(server.tokenFile);
      const wrong = await raw('GET', '/v1/schedulers', {
        host: own(),
        authorization: 'Bearer not-the-token',
      });
      expect(wrong.status).toBe(401);
      const withToken = await raw('GET', '/v1/schedulers', {
        host: own(),
        authorization: `Bearer ${server.token}`,
      });
      expect(withToken.status).toBe(200);
    } finally {
      pretendUid = undefined;
    }
  });

  it('refuses txs as another OS user: txs never sends the token over TCP, even where it could read it', async () => {
    pretendUid = (process.getuid?.() ?? 0) + 4242;
    vi.stubEnv('TXS_LOCAL_TOKEN_FILE', server.tokenFile);
    const seen: (string | undefined)[] = [];
    try {
      // The socket beside the token file is not used: the client is told to find none.
      const client = new TxsClient({
        endpoint: server.url,
        maxRetries: 0,
        ownSocket: async () => ({ why: 'test: no socket' }),
        transport: async (exchange) => {
          seen.push(exchange.headers.authorization);
          return nodeHttpTransport(exchange);
        },
      });
      const error = (await client.schedulers().catch((e: unknown) => e)) as {
        message: string;
        hint?: string;
      };
      expect(error.message).toContain('(HTTP 401)');
      expect(error.message).toContain(server.tokenFile);
      expect(error.hint).toContain('never sends its token over TCP');
      expect(seen).toEqual([undefined]);
    } finally {
      vi.unstubAllEnvs();
      pretendUid = undefined;
    }
  });

  it('admits a request through its own socket as its own user, where TCP would say another user', async () => {
    pretendUid = (process.getuid?.() ?? 0) + 4242;
    try {
      expect(server.socketFile).toBe(join(root, 'private', `${server.port}.sock`));
      const client = new TxsClient({ endpoint: server.url, maxRetries: 0 });
      const viaSocket = new TxsClient({
        endpoint: server.url,
        maxRetries: 0,
        ownSocket: async () => ({ path: server.socketFile as string }),
      });
      await expect(client.schedulers()).rejects.toThrow('(HTTP 401)');
      await expect(viaSocket.schedulers()).resolves.toContainEqual(
        expect.objectContaining({ name: 'local_cwd' }),
      );
    } finally {
      pretendUid = undefined;
    }
  });
});

describe('local server private files', () => {
  it('keeps the token in a 0600 file inside a 0700 directory', () => {
    expect(statSync(server.tokenFile).mode & 0o777).toBe(0o600);
    expect(readFileSync(server.tokenFile, 'utf8').trim()).toBe(server.token);
    expect(server.token.length).toBeGreaterThanOrEqual(32);
  });

  it('creates the data dir 0700 and writes records, logs and dynalite files 0600', async () => {
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    const appId = await runSleep();
    const appDir = join(dataDir, 'local_cwd', appId);
    expect(statSync(join(appDir, 'app.json')).mode & 0o777).toBe(0o600);
    expect(statSync(join(appDir, 'sh', '0', 'stdout.log')).mode & 0o777).toBe(0o600);
    expect(statSync(join(dataDir, 'dynamodb', 'CURRENT')).mode & 0o777).toBe(0o600);
    await raw('POST', `/v1/apps/local_cwd/${appId}/cancel`, { host: own() });
  });

  it("gives replicas the user's own umask, not the server's 077", async () => {
    const run = await raw(
      'POST',
      '/v1/apps',
      { host: own(), 'content-type': 'application/json' },
      JSON.stringify({ scheduler: 'local_cwd', component: 'utils.sh', args: ['sh', '-c', 'umask'] }),
    );
    const appId = String(run.body.appId);
    for (let i = 0; i < 200 && (await stateOf(appId)) !== 'SUCCEEDED'; i++) {
      await new Promise((r) => setTimeout(r, 25));
    }
    const logs = await raw('GET', `/v1/apps/local_cwd/${appId}/logs`, { host: own() });
    expect(logs.body.lines).toEqual([userUmask.toString(8).padStart(4, '0')]);
    expect(process.umask(0o077)).toBe(0o077);
  });

  it('refuses to start a second server on the same data dir, and the first keeps serving', async () => {
    const { startLocalServer } = await import('../../lib/local/server.js');
    const second = startLocalServer({
      port: 0,
      dataDir,
      reconcileEveryMs: 0,
      tokenFile: join(root, 'second.token'),
    });
    await expect(second).rejects.toThrow(DataDirError);
    await expect(second).rejects.toThrow(new RegExp(`another local server \\(pid ${process.pid}\\)`));
    expect(existsSync(join(root, 'second.token'))).toBe(false);
    expect((await raw('GET', '/v1/schedulers', { host: own() })).status).toBe(200);
  });

  it('takes over a lock left by a dead process, and removes its token file and lock on close', async () => {
    const other = join(root, 'other-data');
    const { startLocalServer } = await import('../../lib/local/server.js');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(other, { recursive: true });
    writeFileSync(join(other, LOCK_FILE), JSON.stringify({ pid: 2 ** 22 + 17, id: 'dead' }));
    const tokenFile = join(root, 'other.token');
    const next = await startLocalServer({
      port: 0,
      dataDir: other,
      inMemory: true,
      reconcileEveryMs: 0,
      tokenFile,
    });
    expect(JSON.parse(readFileSync(join(other, LOCK_FILE), 'utf8')).pid).toBe(process.pid);
    expect(existsSync(tokenFile)).toBe(true);
    await next.close();
    expect(existsSync(tokenFile)).toBe(false);
    expect(existsSync(join(other, LOCK_FILE))).toBe(false);
  });
});
