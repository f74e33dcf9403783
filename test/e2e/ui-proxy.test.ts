/**
 * `txs ui`'s server: a fixed, signed upstream; loopback Host/Origin; a one-time token exchanged for an
 * HttpOnly cookie; only the API's paths and methods; no credential in any answer.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ROUTES } from '../../functions/routes.js';
import { createSigV4Signer } from '../../lib/cli/sigv4.js';
import { startUiProxy, UI_PROXY_ROUTES, type UiProxy } from '../../lib/cli/ui-proxy.js';
import { readProcNet } from '../../lib/loopback/peer-user.js';
import { type RawReply, rawRequest } from '../helpers/raw-http.js';

const ACCESS_KEY = 'AKIDEXAMPLEUIPROXY01';
const SECRET = 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYUIPROXYSECRET';
const SESSION_TOKEN = 'FwoGZXIvYXdzEUIPROXYSESSIONTOKEN';

let upstream: Server;
let proxy: UiProxy;
let token: string;
const seen: Array<{ method: string; url: string; headers: IncomingHttpHeaders; body: string }> = [];

function send(
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<RawReply> {
  return rawRequest(proxy.port, method, path, headers, body);
}

const replies: RawReply[] = [];
async function call(method: string, path: string, headers: Record<string, string> = {}, body?: string) {
  const reply = await send(method, path, { host: `127.0.0.1:${proxy.port}`, ...headers }, body);
  replies.push(reply);
  return reply;
}

let cookie = '';

beforeAll(async () => {
  upstream = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      });
      res.writeHead(200, {
        'content-type': 'application/json',
        'set-cookie': 'upstream=1',
        'x-amzn-requestid': 'r1',
      });
      res.end(JSON.stringify({ apps: [] }));
    });
  });
  await new Promise<void>((ok) => upstream.listen(0, '127.0.0.1', ok));
  proxy = await startUiProxy({
    upstream: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/prod`,
    signer: createSigV4Signer({
      region: 'us-east-1',
      credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET, sessionToken: SESSION_TOKEN },
    }),
  });
  token = new URL(proxy.url).searchParams.get('token') ?? '';
});
afterAll(async () => {
  await proxy?.close();
  await new Promise<void>((ok) => upstream?.close(() => ok()));
});

describe('txs ui’s server', () => {
  it('refuses everything but the one-time link before the token was exchanged', async () => {
    expect((await call('GET', '/')).status).toBe(401);
    expect((await call('GET', '/v1/apps')).status).toBe(401);
    expect((await call('GET', '/?token=wrong')).status).toBe(401);
    expect(seen).toHaveLength(0);
  });

  it('exchanges the one-time token for an HttpOnly SameSite=Strict cookie, once', async () => {
    const first = await call('GET', `/?token=${token}`);
    expect(first.status).toBe(303);
    const setCookie = first.headers['set-cookie']?.[0] ?? '';
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/SameSite=Strict/);
    expect(setCookie).toMatch(/; Path=\/; Max-Age=43200$/);
    cookie = setCookie.split(';')[0] ?? '';
    const reused = await call('GET', `/?token=${token}`);
    expect(reused.status).toBe(401);
    expect(reused.headers['set-cookie']).toBeUndefined();
    const page = await call('GET', '/', { cookie });
    expect(page.status).toBe(200);
    expect(page.body).toContain('/ui/app.js');
  });

  it('forwards the API’s routes to the fixed upstream, SigV4-signed, with only the allowed headers', async () => {
    const reply = await call('GET', '/v1/apps?state=RUNNING', { cookie, 'x-forwarded-host': 'evil.example' });
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.body)).toEqual({ apps: [] });
    const got = seen.at(-1)!;
    expect(got.url).toBe('/prod/v1/apps?state=RUNNING');
    expect(got.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLEUIPROXY01\//);
    expect(got.headers.cookie).toBeUndefined();
    expect(got.headers['x-forwarded-host']).toBeUndefined();
    expect(reply.headers['set-cookie']).toBeUndefined();
    const run = await call(
      'POST',
      '/v1/apps',
      {
        cookie,
        origin: `http://127.0.0.1:${proxy.port}`,
        'content-type': 'application/json',
        'idempotency-key': 'k-1',
      },
      '{"scheduler":"aws_batch"}',
    );
    expect(run.status).toBe(200);
    expect(seen.at(-1)!.headers['idempotency-key']).toBe('k-1');
    expect(seen.at(-1)!.body).toBe('{"scheduler":"aws_batch"}');
    expect((await call('GET', '/v1/apps/counts?owner=all', { cookie })).status).toBe(200);
    expect(seen.at(-1)!.url).toBe('/prod/v1/apps/counts?owner=all');
  });

  it('allows every route of the API but its OpenAPI document and workspace uploads, with its method only', () => {
    for (const route of ROUTES) {
      const path = route.path.replace(/\{\w+\}/g, 'x');
      const allowed = UI_PROXY_ROUTES.filter((r) => r.path.test(path)).map((r) => r.method);
      // The dashboard uploads no workspace: a page gets no upload URL into the caller's archives.
      if (route.name === 'OpenApi' || route.name === 'Workspaces') expect(allowed).toEqual([]);
      else expect(allowed, `${route.method} ${route.path}`).toContain(route.method);
    }
  });

  it('refuses a foreign Host, a foreign Origin and a cross-site request even with the cookie', async () => {
    const before = seen.length;
    expect((await send('GET', '/v1/apps', { host: 'evil.example', cookie })).status).toBe(403);
    expect((await send('GET', '/v1/apps', { host: `evil.example:${proxy.port}`, cookie })).status).toBe(403);
    expect((await call('GET', '/v1/apps', { cookie, origin: 'http://evil.example' })).status).toBe(403);
    expect(
      (await call('POST', '/v1/apps', { cookie, origin: `http://localhost:${proxy.port + 1}` })).status,
    ).toBe(403);
    expect((await call('GET', '/v1/apps', { cookie, 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    expect(seen.length).toBe(before);
  });

  it('forwards nothing outside the allow-list of the API’s paths and methods', async () => {
    const before = seen.length;
    expect((await call('GET', '/v1/openapi.json', { cookie })).status).toBe(404);
    expect((await call('GET', '/v1/apps/a/b/c/d', { cookie })).status).toBe(404);
    expect((await call('GET', '/v1/apps/x/..', { cookie })).status).toBe(400);
    expect((await call('GET', '/v1/apps/%2e%2e/x/logs', { cookie })).status).toBe(400);
    expect((await call('PUT', '/v1/apps', { cookie })).status).toBe(405);
    expect((await call('DELETE', '/v1/apps', { cookie })).status).toBe(405);
    expect((await call('GET', 'http://evil.example/v1/apps', { cookie })).status).toBe(400);
    expect(seen.length).toBe(before);
  });

  it('never sends a credential to the page', () => {
    expect(replies.length).toBeGreaterThan(10);
    for (const reply of replies) {
      const text = JSON.stringify(reply);
      for (const secret of [ACCESS_KEY, SECRET, SESSION_TOKEN, 'AWS4-HMAC-SHA256', 'x-amz-security-token']) {
        expect(text).not.toContain(secret);
      }
    }
  });
});

describe('txs ui’s browser sessions', () => {
  /** When true, /proc/net/tcp is rewritten so every client socket belongs to another OS user. */
  let otherUser = false;
  const started: UiProxy[] = [];
  const start = async (port?: number): Promise<UiProxy> => {
    const one = await startUiProxy({
      upstream: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/prod`,
      ...(port === undefined ? {} : { port }),
      readProcNet: async (family) => {
        const tables = await readProcNet(family);
        if (!otherUser) return tables;
        return tables.map((t) =>
          t.replace(/^(\s*\d+:(?:\s+\S+){6}\s+)\d+/gm, (_, head: string) => `${head}4242`),
        );
      },
    });
    started.push(one);
    return one;
  };
  const at = (one: UiProxy, method: string, path: string, headers: Record<string, string> = {}) =>
    rawRequest(one.port, method, path, { host: `127.0.0.1:${one.port}`, ...headers });
  /** Spends the proxy's link: the `name=value` of its session cookie. */
  const openSession = async (one: UiProxy): Promise<string> => {
    const link = new URL(one.url);
    const reply = await at(one, 'GET', `${link.pathname}${link.search}`);
    expect(reply.status).toBe(303);
    return reply.headers['set-cookie']?.[0]?.split(';')[0] ?? '';
  };
  afterEach(() => {
    vi.useRealTimers();
    otherUser = false;
  });
  afterAll(async () => {
    await Promise.all(started.map((one) => one.close()));
  });

  it('refuses its session cookie from another OS user’s connection, and its link too, without using it up', async () => {
    const one = await start();
    const link = new URL(one.url);
    otherUser = true;
    const stolenLink = await at(one, 'GET', `${link.pathname}${link.search}`);
    expect(stolenLink.status).toBe(401);
    expect(stolenLink.headers['set-cookie']).toBeUndefined();
    otherUser = false;
    const cookie = await openSession(one);
    expect((await at(one, 'GET', '/v1/apps', { cookie })).status).toBe(200);
    const before = seen.length;
    otherUser = true;
    expect((await at(one, 'GET', '/v1/apps', { cookie })).status).toBe(401);
    expect((await at(one, 'GET', '/', { cookie })).status).toBe(401);
    // Nothing was signed and sent for the other user.
    expect(seen.length).toBe(before);
  });

  it('spends its link once even when two requests present it together', async () => {
    const one = await start();
    const link = new URL(one.url);
    const target = `${link.pathname}${link.search}`;
    const replies = await Promise.all([at(one, 'GET', target), at(one, 'GET', target)]);
    expect(replies.map((r) => r.status).sort()).toEqual([303, 401]);
  });

  it('ends the session at POST /ui/logout from its page, and clears the cookie', async () => {
    const one = await start();
    const cookie = await openSession(one);
    const origin = `http://127.0.0.1:${one.port}`;
    expect((await at(one, 'POST', '/ui/logout', { cookie })).status).toBe(403);
    const out = await at(one, 'POST', '/ui/logout', { cookie, origin });
    expect(out.status).toBe(200);
    expect(out.headers['set-cookie']).toEqual([
      `txs_ui_${one.port}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0`,
    ]);
    expect((await at(one, 'GET', '/v1/apps', { cookie })).status).toBe(401);
  });

  it('refuses a session left idle for an hour', async () => {
    const one = await start();
    const cookie = await openSession(one);
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 61 * 60_000 });
    expect((await at(one, 'GET', '/v1/apps', { cookie })).status).toBe(401);
  });

  it('renews the cookie after 15 minutes: the new value replaces the old, which stops a minute later', async () => {
    const one = await start();
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    const old = await openSession(one);
    vi.setSystemTime(Date.now() + 16 * 60_000);
    const renewing = await at(one, 'GET', '/v1/apps', { cookie: old });
    expect(renewing.status).toBe(200);
    expect(renewing.headers['set-cookie']?.[0]).toMatch(
      new RegExp(`^txs_ui_${one.port}=[\\w.-]+; HttpOnly; SameSite=Strict; Path=/; Max-Age=42240$`),
    );
    const fresh = renewing.headers['set-cookie']?.[0]?.split(';')[0] ?? '';
    expect(fresh).not.toBe(old);
    vi.setSystemTime(Date.now() + 2 * 60_000);
    expect((await at(one, 'GET', '/v1/apps', { cookie: old })).status).toBe(401);
    expect((await at(one, 'GET', '/v1/apps', { cookie: fresh })).status).toBe(200);
  });

  it('refuses the cookie of another txs ui, even one that ran on the same port before', async () => {
    const first = await start();
    const second = await start();
    const firstCookie = await openSession(first);
    await openSession(second);
    const value = firstCookie.split('=')[1] ?? '';
    // Browsers send every port's cookies to 127.0.0.1: each server reads only its own name.
    expect((await at(second, 'GET', '/v1/apps', { cookie: firstCookie })).status).toBe(401);
    expect((await at(second, 'GET', '/v1/apps', { cookie: `txs_ui_${second.port}=${value}` })).status).toBe(
      401,
    );
    const port = first.port;
    await first.close();
    const restarted = await start(port);
    expect(restarted.port).toBe(port);
    expect((await at(restarted, 'GET', '/v1/apps', { cookie: firstCookie })).status).toBe(401);
  });
});
