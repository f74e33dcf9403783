/**
 * `txs ui`'s server: the dashboard on a loopback port for a deployed stack. The page's API calls are
 * forwarded to one fixed upstream (the configured endpoint, never the request's Host), SigV4-signed here, so
 * AWS credentials never reach the browser. Only loopback `Host`/`Origin` with this port are admitted; the
 * URL printed at start carries a one-time token that is exchanged for an HttpOnly, SameSite=Strict session
 * cookie (`one-time-link.ts`, which the local server uses too: the session expires, is renewed, ends at
 * `POST /ui/logout`, and on Linux works only from connections of the OS user running `txs ui`); only the
 * API's own paths and methods are forwarded.
 *
 * @module
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sendError } from '../loopback/error-reply.js';
import { isLoopbackAuthority, isLoopbackOrigin } from '../loopback/local-token.js';
import { LOGOUT_PATH, OneTimeLink } from '../loopback/one-time-link.js';
import { PeerUser, type ProcNetReader } from '../loopback/peer-user.js';
import { serveUi } from '../loopback/ui-assets.js';
import type { RequestSigner } from './sigv4.js';

/** The API's routes the page may call: method and path pattern (one segment per `{…}`). */
export const UI_PROXY_ROUTES: ReadonlyArray<{ method: string; path: RegExp }> = [
  { method: 'GET', path: /^\/v1\/schedulers$/ },
  { method: 'GET', path: /^\/v1\/components$/ },
  { method: 'POST', path: /^\/v1\/dryrun$/ },
  { method: 'GET', path: /^\/v1\/apps$/ },
  { method: 'GET', path: /^\/v1\/apps\/counts$/ },
  { method: 'POST', path: /^\/v1\/apps$/ },
  { method: 'GET', path: /^\/v1\/apps\/[^/]+\/[^/]+$/ },
  { method: 'DELETE', path: /^\/v1\/apps\/[^/]+\/[^/]+$/ },
  { method: 'POST', path: /^\/v1\/apps\/[^/]+\/[^/]+\/cancel$/ },
  { method: 'GET', path: /^\/v1\/apps\/[^/]+\/[^/]+\/logs$/ },
];

/** Request headers passed on to the API; everything else (cookies above all) stays here. */
const FORWARDED_REQUEST_HEADERS = ['accept', 'content-type', 'idempotency-key'];
/** Response headers passed back to the page. */
const FORWARDED_RESPONSE_HEADERS = ['content-type', 'retry-after', 'idempotent-replayed'];
const MAX_BODY = 1024 * 1024;

/** Options of {@link startUiProxy}. */
export interface UiProxyOptions {
  /** The API base URL (e.g. `https://abc.execute-api.us-east-1.amazonaws.com/prod`), without a trailing slash. */
  upstream: string;
  /** Signs each forwarded request; unsigned when omitted. */
  signer?: RequestSigner;
  /** Extra headers on every forwarded request (e.g. `x-txs-user`). */
  headers?: Record<string, string>;
  /** Port on 127.0.0.1; 0 picks a free one. */
  port?: number;
  /** `fetch` used upstream (tests). */
  fetch?: typeof fetch;
  /** Reads `/proc/net/tcp{,6}` to tell the caller's OS user (tests). */
  readProcNet?: ProcNetReader;
}

/** A running `txs ui` server. */
export interface UiProxy {
  /** The URL to open once: it carries the one-time token. */
  url: string;
  port: number;
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new RangeError('body over 1 MiB');
    chunks.push(chunk as Buffer);
  }
  return chunks.length === 0 ? undefined : Buffer.concat(chunks).toString('utf8');
}

/**
 * Starts the dashboard server for a deployed stack on 127.0.0.1.
 *
 * @example
 * ```ts
 * const proxy = await startUiProxy({ upstream: 'https://abc.execute-api.us-east-1.amazonaws.com/prod', signer });
 * console.log(`open ${proxy.url}`);
 * ```
 */
export async function startUiProxy(options: UiProxyOptions): Promise<UiProxy> {
  const upstream = new URL(options.upstream.replace(/\/+$/, ''));
  const basePath = upstream.pathname.replace(/\/+$/, '');
  const doFetch = options.fetch ?? fetch;
  let port = 0;
  // Set right after listening, before any connection can be handled.
  let link!: OneTimeLink;

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const target = req.url ?? '/';
    if (!target.startsWith('/'))
      return sendError(res, 400, 'BadRequest', 'only origin-form request targets are served');
    if (req.headers.host === undefined || !isLoopbackAuthority(req.headers.host, port)) {
      return sendError(res, 403, 'Forbidden', `Host must be 127.0.0.1:${port} or localhost:${port}`);
    }
    const origin = req.headers.origin;
    if (origin !== undefined && !isLoopbackOrigin(origin, port)) {
      return sendError(res, 403, 'Forbidden', 'cross-origin requests are refused');
    }
    const site = req.headers['sec-fetch-site'];
    if (site !== undefined && site !== 'same-origin' && site !== 'none') {
      return sendError(res, 403, 'Forbidden', `a ${site} request may not use this dashboard`);
    }
    // The path as sent: `.` and `..` segments are refused before URL parsing could resolve them.
    const rawPath = target.split(/[?#]/)[0] ?? '';
    if (rawPath.split('/').some((s) => /^(\.|%2e){1,2}$/i.test(s))) {
      return sendError(res, 400, 'ValidationFailed', 'path: "." and ".." segments are not resolved');
    }
    const url = new URL(target, 'http://127.0.0.1');
    const path = url.pathname;
    // The one-time token: exchanged once for the session cookie, then gone.
    if (await link.exchange(req, res)) return;
    if (!(await link.admit(req, res))) {
      return sendError(
        res,
        401,
        'Unauthorized',
        'no live session: open the link txs ui printed (it works once, for the OS user running txs ui); ' +
          'after a logout or expiry, restart txs ui for a new one',
      );
    }
    if (rawPath === LOGOUT_PATH && req.method === 'POST') {
      req.resume();
      return link.logout(req, res);
    }
    if (await serveUi(req.method ?? 'GET', path, res)) return;
    const routes = UI_PROXY_ROUTES.filter((r) => r.path.test(rawPath));
    if (routes.length === 0) return sendError(res, 404, 'RouteNotFound', `No route ${req.method} ${rawPath}`);
    if (!routes.some((r) => r.method === req.method)) {
      return sendError(res, 405, 'MethodNotAllowed', `${req.method} is not allowed on ${rawPath}`);
    }
    const method = req.method ?? 'GET';
    let body: string | undefined;
    try {
      body = await readBody(req);
    } catch {
      return sendError(res, 413, 'PayloadTooLarge', 'body over 1 MiB');
    }
    const forward = new URL(`${upstream.origin}${basePath}${rawPath}${url.search}`);
    const headers: Record<string, string> = { ...(options.headers ?? {}) };
    for (const name of FORWARDED_REQUEST_HEADERS) {
      const value = req.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    const signed = options.signer
      ? await options.signer.sign({ method, url: forward, headers, ...(body === undefined ? {} : { body }) })
      : headers;
    let answer: Response;
    try {
      answer = await doFetch(forward, { method, headers: signed, body, redirect: 'manual' });
    } catch {
      return sendError(res, 502, 'UpstreamUnavailable', `the API at ${upstream.origin} did not answer`);
    }
    const out: Record<string, string> = { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' };
    for (const name of FORWARDED_RESPONSE_HEADERS) {
      const value = answer.headers.get(name);
      if (value !== null) out[name] = value;
    }
    res.writeHead(answer.status, out);
    res.end(Buffer.from(await answer.arrayBuffer()));
  };

  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) sendError(res, 500, 'InternalError', 'txs ui failed to answer');
      else res.end();
    });
  });
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(options.port ?? 0, '127.0.0.1', ok);
  });
  port = (server.address() as AddressInfo).port;
  link = new OneTimeLink({
    port,
    refusedLinkMessage: 'this link was already used or is not this server’s; restart txs ui',
    peer: new PeerUser(options.readProcNet ? { readProcNet: options.readProcNet } : {}),
  });
  return {
    url: link.newLink(`http://127.0.0.1:${port}`),
    port,
    close: () =>
      new Promise<void>((ok) => {
        server.close(() => ok());
        server.closeAllConnections();
      }),
  };
}
