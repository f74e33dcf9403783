/**
 * The dashboard's files on the local server: served at `/` and `/ui/*` under the API's admission rule
 * (loopback Host/Origin, then the token, the one-time link's cookie or the server's OS user), with headers
 * that keep the page to itself. A platform without `/proc/net/tcp` (macOS, Windows) is simulated through
 * the server's `readProcNet` seam: it reads every table as empty, as the real reader does there.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { main } from '../../lib/cli/index.js';
import { readProcNet } from '../../lib/local/access.js';
import type { LocalServer } from '../../lib/local/server.js';
import { LOCAL_TOKEN_FILE_ENV } from '../../lib/loopback/local-token.js';
import { type RawReply, rawRequest } from '../helpers/raw-http.js';
import { memoryIO } from '../unit/cli/helpers.js';

let server: LocalServer;
let root: string;
/** When true, /proc/net/tcp is rewritten so every client socket belongs to another OS user. */
let otherUser = false;
/** When true, there is no /proc/net/tcp (the real reader then reads '' for each table). */
let noProc = false;
/** What the server printed (it runs verbose: one line per request). */
const printed: string[] = [];

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'txs-dash-'));
  const { startLocalServer } = await import('../../lib/local/server.js');
  // The server writes its lines to stdout in batches (lib/local/console-lines.ts); keep them line by line.
  vi.spyOn(process.stdout, 'write').mockImplementation((text: string | Uint8Array) => {
    printed.push(
      ...String(text)
        .split('\n')
        .filter((line) => line !== ''),
    );
    return true;
  });
  server = await startLocalServer({
    port: 0,
    dataDir: join(root, 'data'),
    inMemory: true,
    reconcileEveryMs: 0,
    verbose: true,
    tokenFile: join(root, 'token'),
    readProcNet: async (family) => {
      const tables = await readProcNet(family);
      if (noProc) return tables.map(() => '');
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
  vi.restoreAllMocks();
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

describe('the local server’s one-time link (a browser where there is no /proc/net/tcp)', () => {
  const replies: RawReply[] = [];
  const call = async (path: string, headers: Record<string, string> = {}, method = 'GET') => {
    const reply = await get(path, { ...host(), ...headers }, method);
    replies.push(reply);
    return reply;
  };
  const pathOf = (link: string) => {
    const url = new URL(link);
    expect(url.origin).toBe(server.url);
    return `${url.pathname}${url.search}`;
  };
  let cookie = '';
  const tokens: string[] = [];

  it('refuses a browser without the cookie: it cannot prove its OS user', async () => {
    noProc = true;
    expect((await call('/')).status).toBe(401);
    const api = await call('/v1/apps');
    expect(api.status).toBe(401);
    expect(api.body).toContain('one-time link');
  });

  it('exchanges the link for an HttpOnly SameSite=Strict cookie once, which then admits the page and the API', async () => {
    noProc = true;
    const link = pathOf(server.newDashboardLink());
    tokens.push(new URL(link, server.url).searchParams.get('token') ?? '');
    const first = await call(link);
    expect(first.status).toBe(303);
    expect(first.headers.location).toBe('/');
    const setCookie = first.headers['set-cookie']?.[0] ?? '';
    expect(setCookie).toMatch(
      new RegExp(
        `^txs_ui_${server.port}=[\\w-]{12}\\.[\\w-]{16}\\.[\\w-]{43}; HttpOnly; SameSite=Strict; Path=/; Max-Age=43200$`,
      ),
    );
    cookie = setCookie.split(';')[0] ?? '';
    expect((await call('/', { cookie })).status).toBe(200);
    expect((await call('/ui/app.js', { cookie })).status).toBe(200);
    const apps = await call('/v1/apps', { cookie });
    expect(apps.status).toBe(200);
    expect(JSON.parse(apps.body)).toEqual({ apps: [] });
  });

  it('refuses a reused link, a wrong token and a wrong cookie with 401, and still wants the cookie', async () => {
    noProc = true;
    const reused = await call(`/?token=${tokens[0]}`);
    expect(reused.status).toBe(401);
    expect(reused.headers['set-cookie']).toBeUndefined();
    expect(reused.body).toContain('txs ui');
    expect((await call('/?token=wrong')).status).toBe(401);
    expect((await call('/', { cookie: `txs_ui_${server.port}=forged` })).status).toBe(401);
    expect((await call('/', { cookie: `txs_ui_${server.port + 1}=${cookie.split('=')[1]}` })).status).toBe(
      401,
    );
    expect((await call('/v1/apps')).status).toBe(401);
    expect((await call('/v1/apps', { cookie })).status).toBe(200);
  });

  it('keeps the Host and Origin checks: a foreign Host cannot spend the link, and the cookie does not pass them', async () => {
    noProc = true;
    const link = pathOf(server.newDashboardLink());
    tokens.push(new URL(link, server.url).searchParams.get('token') ?? '');
    expect((await call(link, { host: `evil.example:${server.port}` })).status).toBe(403);
    expect((await call(link, { origin: 'http://evil.example' })).status).toBe(403);
    expect((await call(link, { 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    // None of those used it up.
    expect((await call(link)).status).toBe(303);
    expect((await call('/v1/apps', { cookie, host: `evil.example:${server.port}` })).status).toBe(403);
    expect((await call('/v1/apps', { cookie, origin: 'http://evil.example' })).status).toBe(403);
    expect((await call('/v1/apps', { cookie, 'sec-fetch-site': 'cross-site' }, 'POST')).status).toBe(403);
  });

  it('makes a new link for an admitted caller (txs ui), which replaces the unused one', async () => {
    noProc = true;
    expect((await call('/ui/link', {}, 'POST')).status).toBe(401);
    const stale = pathOf(server.newDashboardLink());
    // The one answer that carries a token: the new link, to the admitted caller that asked for it.
    const made = await get('/ui/link', { ...host(), authorization: `Bearer ${server.token}` }, 'POST');
    expect(made.status).toBe(201);
    const fresh = pathOf((JSON.parse(made.body) as { url: string }).url);
    tokens.push(
      new URL(fresh, server.url).searchParams.get('token') ?? '',
      new URL(stale, server.url).searchParams.get('token') ?? '',
    );
    expect((await call(stale)).status).toBe(401);
    expect((await call(fresh)).status).toBe(303);
  });

  it('gives txs ui a new link for the local server through its own socket: no token, no /proc needed', async () => {
    noProc = true;
    const io = memoryIO({ env: { TXS_ENDPOINT: server.url, [LOCAL_TOKEN_FILE_ENV]: join(root, 'token') } });
    expect(await main(['ui'], io)).toBe(0);
    const link = /Open once \(the link works one time\): (\S+)/.exec(io.out())?.[1] ?? '';
    tokens.push(new URL(link).searchParams.get('token') ?? '');
    expect((await call(pathOf(link))).status).toBe(303);
  });

  it('admits the same OS user on Linux without a link, as before', async () => {
    noProc = false;
    expect((await call('/')).status).toBe(200);
  });

  it('never puts a link’s token in another answer or in what the server prints', () => {
    expect(tokens.filter((t) => t.length === 43)).toHaveLength(5);
    for (const token of tokens) {
      for (const reply of replies) expect(JSON.stringify(reply)).not.toContain(token);
      for (const line of printed) expect(line).not.toContain(token);
    }
    expect(printed.some((line) => line.includes('/?token=… -> 303 (one-time link)'))).toBe(true);
    expect(printed.some((line) => line.includes('/?token=… -> 403 (Forbidden)'))).toBe(true);
  });
});

describe('the local server’s browser sessions', () => {
  const call = (path: string, headers: Record<string, string> = {}, method = 'GET') =>
    get(path, { ...host(), ...headers }, method);
  /** Spends a new one-time link: the `name=value` of the session cookie it sets. */
  const openSession = async (): Promise<string> => {
    const link = new URL(server.newDashboardLink());
    const reply = await call(`${link.pathname}${link.search}`);
    expect(reply.status).toBe(303);
    return reply.headers['set-cookie']?.[0]?.split(';')[0] ?? '';
  };
  const cookieValue = (reply: RawReply) => reply.headers['set-cookie']?.[0]?.split(';')[0];
  afterEach(() => {
    vi.useRealTimers();
    noProc = false;
    otherUser = false;
  });

  it('refuses a session cookie from another OS user’s connection on Linux, and the link too, without using it up', async () => {
    const cookie = await openSession();
    otherUser = true;
    const replayed = await call('/v1/apps', { cookie });
    expect(replayed.status).toBe(401);
    expect(replayed.body).toContain('does not come from the server’s own OS user');
    const link = new URL(server.newDashboardLink());
    const target = `${link.pathname}${link.search}`;
    const stolen = await call(target);
    expect(stolen.status).toBe(401);
    expect(stolen.headers['set-cookie']).toBeUndefined();
    otherUser = false;
    expect((await call(target)).status).toBe(303);
  });

  it('ends the session at POST /ui/logout from its page: the cookie is cleared and refused afterwards', async () => {
    noProc = true;
    const cookie = await openSession();
    const origin = server.url;
    // Only the page's own request (it sends Origin) may end it.
    expect((await call('/ui/logout', { cookie }, 'POST')).status).toBe(403);
    expect((await call('/ui/logout', { cookie, origin: 'http://evil.example' }, 'POST')).status).toBe(403);
    expect((await call('/', { cookie })).status).toBe(200);
    const out = await call('/ui/logout', { cookie, origin }, 'POST');
    expect(out.status).toBe(200);
    expect(JSON.parse(out.body)).toEqual({ loggedOut: true });
    expect(out.headers['set-cookie']).toEqual([
      `txs_ui_${server.port}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0`,
    ]);
    expect((await call('/', { cookie })).status).toBe(401);
    expect((await call('/v1/apps', { cookie })).status).toBe(401);
  });

  it('refuses a session left idle for an hour', async () => {
    noProc = true;
    const cookie = await openSession();
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 61 * 60_000 });
    expect((await call('/', { cookie })).status).toBe(401);
  });

  it('renews the cookie after 15 minutes: the new value admits, the old one only for a minute more', async () => {
    noProc = true;
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    const old = await openSession();
    vi.setSystemTime(Date.now() + 16 * 60_000);
    const renewing = await call('/', { cookie: old });
    expect(renewing.status).toBe(200);
    const fresh = cookieValue(renewing) ?? '';
    expect(fresh).toMatch(new RegExp(`^txs_ui_${server.port}=`));
    expect(fresh).not.toBe(old);
    expect(renewing.headers['set-cookie']?.[0]).toMatch(
      /; HttpOnly; SameSite=Strict; Path=\/; Max-Age=42240$/,
    );
    // A request already under way with the old value passes, and is not handed the new one.
    const racing = await call('/', { cookie: old });
    expect(racing.status).toBe(200);
    expect(racing.headers['set-cookie']).toBeUndefined();
    vi.setSystemTime(Date.now() + 2 * 60_000);
    expect((await call('/', { cookie: old })).status).toBe(401);
    expect((await call('/', { cookie: fresh })).status).toBe(200);
  });

  it('refuses a session past its 12 hours even where it was used every half hour', async () => {
    noProc = true;
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    let cookie = await openSession();
    for (let minutes = 30; minutes < 12 * 60; minutes += 30) {
      vi.setSystemTime(Date.now() + 30 * 60_000);
      const reply = await call('/', { cookie });
      expect(reply.status).toBe(200);
      cookie = cookieValue(reply) ?? cookie;
    }
    vi.setSystemTime(Date.now() + 30 * 60_000);
    expect((await call('/', { cookie })).status).toBe(401);
  });
});
