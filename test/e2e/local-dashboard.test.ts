/**
 * The dashboard's files on the local server: served at `/` and `/ui/*` under the API's admission rule
 * (loopback Host/Origin, then the token or the server's OS user), with headers that keep the page to itself.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readProcNet } from '../../lib/local/access.js';
import type { LocalServer } from '../../lib/local/server.js';
import { type RawReply, rawRequest } from '../helpers/raw-http.js';

let server: LocalServer;
let root: string;
/** When true, /proc/net/tcp is rewritten so every client socket belongs to another OS user. */
let otherUser = false;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'txs-dash-'));
  const { startLocalServer } = await import('../../lib/local/server.js');
  server = await startLocalServer({
    port: 0,
    dataDir: join(root, 'data'),
    inMemory: true,
    reconcileEveryMs: 0,
    tokenFile: join(root, 'token'),
    readProcNet: async () => {
      const tables = await readProcNet();
      if (!otherUser) return tables;
      return tables.map((t) =>
        t
          .split('\n')
          .map((line, i) =>
            i === 0 || line.trim() === '' ? line : line.replace(/^(\s*(?:\S+\s+){7})\S+/, '$1 4242'),
          )
          .join('\n'),
      );
    },
  });
});
afterAll(async () => {
  await server?.close();
  rmSync(root, { recursive: true, force: true });
});

function get(path: string, headers: Record<string, string>, method = 'GET'): Promise<RawReply> {
  return rawRequest(server.port, method, path, headers);
}

const host = () => ({ host: `127.0.0.1:${server.port}` });

describe('the local server’s dashboard', () => {
  it('serves the page, its script and style sheet to the server’s own user, with a strict CSP', async () => {
    otherUser = false;
    const page = await get('/', host());
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.body).toContain('<script type="module" src="/ui/app.js">');
    expect(page.headers['content-security-policy']).toContain("default-src 'none'");
    expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    const js = await get('/ui/app.js', host());
    expect(js.status).toBe(200);
    expect(js.headers['content-type']).toMatch(/^text\/javascript/);
    expect((await get('/ui/app.css', host())).headers['content-type']).toMatch(/^text\/css/);
  });

  it('refuses the page to a foreign Host (DNS rebinding), a foreign Origin and a cross-site navigation', async () => {
    otherUser = false;
    for (const path of ['/', '/ui/app.js']) {
      expect((await get(path, { host: `evil.example:${server.port}` })).status).toBe(403);
      expect((await get(path, { ...host(), origin: 'http://evil.example' })).status).toBe(403);
      expect((await get(path, { ...host(), 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    }
  });

  it('refuses the page to another OS user without the token, and serves it with the token', async () => {
    otherUser = true;
    try {
      const refused = await get('/', host());
      expect(refused.status).toBe(401);
      expect(refused.body).not.toContain('<script');
      expect((await get('/ui/app.js', host())).status).toBe(401);
      expect((await get('/', { ...host(), authorization: `Bearer ${server.token}` })).status).toBe(200);
    } finally {
      otherUser = false;
    }
  });

  it('serves only its own files: other paths and methods reach the API’s 404/405, never the file system', async () => {
    expect((await get('/ui/../package.json', host())).status).toBe(400);
    expect((await get('/ui/main.ts', host())).status).toBe(404);
    expect((await get('/package.json', host())).status).toBe(404);
    expect((await get('/', host(), 'POST')).status).toBe(404);
  });
});
