/**
 * The proof that a loopback endpoint's socket is the caller's own (`lib/loopback/local-socket.ts`): only a
 * socket owned by the caller, in a directory owned by the caller with no group or other access, reached
 * without following a symbolic link.
 */
import { chmodSync, lchownSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findOwnSocket, localSocketFile } from '../../../lib/loopback/local-socket.js';

const uid = process.getuid?.() ?? 0;
let root: string;
let servers: Server[];

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'txs-own-socket-'));
  servers = [];
});
afterEach(async () => {
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  rmSync(root, { recursive: true, force: true });
});

/** A listening socket at `file`. */
async function listen(file: string): Promise<void> {
  const server = createServer();
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(file, resolve));
}

/** A private directory holding the socket of port 8080, and the environment that points txs at it. */
async function ownSocketIn(dir: string): Promise<Record<string, string>> {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  await listen(join(dir, '8080.sock'));
  return { TXS_LOCAL_TOKEN_FILE: join(dir, '8080.token') };
}

describe('findOwnSocket', () => {
  it('finds the socket beside the token file, for every loopback name of the port', async () => {
    const env = await ownSocketIn(join(root, 'private'));
    for (const endpoint of ['http://localhost:8080', 'http://127.0.0.1:8080', 'http://[::1]:8080/']) {
      expect(await findOwnSocket(endpoint, { env, uid })).toEqual({
        path: join(root, 'private', '8080.sock'),
      });
    }
    expect(localSocketFile(8080, {}, '/home/me')).toBe('/home/me/.txs/local/8080.sock');
  });

  it('proves nothing for an endpoint that is not loopback http, or another port', async () => {
    const env = await ownSocketIn(join(root, 'private'));
    for (const endpoint of ['https://localhost:8080', 'http://10.0.0.1:8080', 'http://127.0.0.1:8081']) {
      expect((await findOwnSocket(endpoint, { env, uid })).path).toBeUndefined();
    }
  });

  it('refuses a socket that belongs to another user', async () => {
    const env = await ownSocketIn(join(root, 'private'));
    lchownSync(join(root, 'private', '8080.sock'), uid + 4242, uid + 4242);
    const found = await findOwnSocket('http://localhost:8080', { env, uid });
    expect(found).toEqual({ why: expect.stringContaining(`belongs to uid ${uid + 4242}, not to you`) });
  });

  it('refuses a socket in a directory another user owns, or one open to the group or others', async () => {
    const env = await ownSocketIn(join(root, 'private'));
    chmodSync(join(root, 'private'), 0o770);
    expect((await findOwnSocket('http://localhost:8080', { env, uid })).why).toMatch(/open to other users/);
    chmodSync(join(root, 'private'), 0o701);
    expect((await findOwnSocket('http://localhost:8080', { env, uid })).why).toMatch(/open to other users/);
    chmodSync(join(root, 'private'), 0o700);
    expect((await findOwnSocket('http://localhost:8080', { env, uid })).path).toBeDefined();
    // Seen by another user, the same directory and socket are not theirs.
    expect((await findOwnSocket('http://localhost:8080', { env, uid: uid + 1 })).why).toMatch(
      `belongs to uid ${uid}, not to you`,
    );
  });

  it('never follows a symbolic link: neither the socket nor its directory may be one', async () => {
    await ownSocketIn(join(root, 'real'));
    mkdirSync(join(root, 'linked'), { mode: 0o700 });
    symlinkSync(join(root, 'real', '8080.sock'), join(root, 'linked', '8080.sock'));
    const viaLinkedSocket = { TXS_LOCAL_TOKEN_FILE: join(root, 'linked', '8080.token') };
    expect((await findOwnSocket('http://localhost:8080', { env: viaLinkedSocket, uid })).why).toMatch(
      /is not a socket/,
    );
    symlinkSync(join(root, 'real'), join(root, 'dir-link'));
    const viaLinkedDir = { TXS_LOCAL_TOKEN_FILE: join(root, 'dir-link', '8080.token') };
    expect((await findOwnSocket('http://localhost:8080', { env: viaLinkedDir, uid })).why).toMatch(
      /is a symbolic link/,
    );
  });

  it('refuses a plain file in place of the socket, a missing socket, and a platform without uids', async () => {
    const env = { TXS_LOCAL_TOKEN_FILE: join(root, 'p', '8080.token') };
    mkdirSync(join(root, 'p'), { mode: 0o700 });
    expect((await findOwnSocket('http://localhost:8080', { env, uid })).why).toMatch(
      /no local server socket/,
    );
    writeFileSync(join(root, 'p', '8080.sock'), '');
    expect((await findOwnSocket('http://localhost:8080', { env, uid })).why).toMatch(/is not a socket/);
    const own = await ownSocketIn(join(root, 'private'));
    expect((await findOwnSocket('http://localhost:8080', { env: own, uid: undefined })).why).toMatch(
      /no OS user ids/,
    );
  });
});
