/**
 * A browser's way in to a loopback server by a one-time link, as Jupyter does: the server prints
 * `http://127.0.0.1:<port>/?token=<one-time token>`; the first request of `/` with that token is answered
 * with a 303 to `/` that sets an `HttpOnly; SameSite=Strict` session cookie, and the token stops working.
 * Every later request of that browser carries the cookie. `txs ui` admits the page this way, and so does the
 * local server where the browser's OS user cannot be read from `/proc/net/tcp` (macOS, Windows).
 *
 * The caller checks `Host`, `Origin` and `Sec-Fetch-Site` before {@link OneTimeLink.exchange} and
 * {@link OneTimeLink.admits}: this module only knows the token and the cookie.
 *
 * @module
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** Options of {@link OneTimeLink}. */
export interface OneTimeLinkOptions {
  /**
   * The server's port: part of the cookie's name, since browsers do not keep cookies apart by port (the local
   * server and `txs ui` on 127.0.0.1 must not overwrite each other's).
   */
  port: number;
  /** What a reused or wrong link is told (e.g. how to get a new one). */
  refusedLinkMessage: string;
}

function equal(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

const newSecret = () => randomBytes(32).toString('base64url');

/** `target` (a request target) with the value of its `token` query parameter replaced by `…`, for logs. */
export function withoutToken(target: string): string {
  return target.replace(/([?&]token=)[^&#]*/gi, '$1…');
}

/** One server's one-time links and the browser session they open (see the module comment). */
export class OneTimeLink {
  /** The token of the newest link printed, until it is used. */
  private pending: string | undefined;
  private readonly session = newSecret();
  /** The session cookie's name. */
  readonly cookieName: string;

  constructor(private readonly options: OneTimeLinkOptions) {
    this.cookieName = `txs_ui_${options.port}`;
  }

  /**
   * A new link to print: `<origin>/?token=…`. It replaces a link not used yet (only the newest works), and
   * works once.
   */
  newLink(origin: string): string {
    this.pending = newSecret();
    return `${origin}/?token=${this.pending}`;
  }

  /**
   * Answers the link's request (path `/` with a `token` query parameter): a 303 to `/` with the session cookie
   * the first time, a 401 for a used or wrong token. Returns false, sending nothing, for any other request.
   */
  exchange(req: IncomingMessage, res: ServerResponse): boolean {
    const target = req.url ?? '/';
    const query = target.startsWith('/?') ? new URLSearchParams(target.slice(2).split('#')[0]) : undefined;
    const presented = query?.get('token');
    if (presented === undefined || presented === null) return false;
    if (this.pending === undefined || !equal(presented, this.pending)) {
      res.writeHead(401, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      res.end(JSON.stringify({ error: { code: 'Unauthorized', message: this.options.refusedLinkMessage } }));
      return true;
    }
    this.pending = undefined;
    res.writeHead(303, {
      location: '/',
      'set-cookie': `${this.cookieName}=${this.session}; HttpOnly; SameSite=Strict; Path=/`,
      'cache-control': 'no-store',
      'referrer-policy': 'no-referrer',
    });
    res.end();
    return true;
  }

  /** True when the request carries this server's session cookie. */
  admits(req: IncomingMessage): boolean {
    for (const part of (req.headers.cookie ?? '').split(';')) {
      const [name, ...value] = part.trim().split('=');
      if (name === this.cookieName) return equal(value.join('='), this.session);
    }
    return false;
  }
}
