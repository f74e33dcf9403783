/**
 * A browser's way in to a loopback server by a one-time link, as Jupyter does: the server prints
 * `http://127.0.0.1:<port>/?token=<one-time token>`; the first request of `/` with that token is answered
 * with a 303 to `/` that opens a browser session (`browser-sessions.ts`: it expires, its value is replaced
 * every 15 minutes, and {@link LOGOUT_PATH} ends it) and sets its cookie,
 * `txs_ui_<port>=…; HttpOnly; SameSite=Strict; Path=/; Max-Age=…`; the token stops working. Every later
 * request of that browser carries the cookie. `txs ui` admits the page this way, and so does the local server
 * where the browser's OS user cannot be read from `/proc/net/tcp` (macOS, Windows).
 *
 * A session is bound to its server's OS user where the platform tells who is on the other end of a
 * connection (`peer-user.ts`, Linux): the token and the cookie are refused from another user's connection,
 * and such a refusal does not use up the token. Where it does not (macOS, Windows), the cookie alone
 * admits. It is bound to its server process: the name carries the port (browsers send every port's cookies
 * to 127.0.0.1, so each server reads and writes only its own name) and the value the process's random
 * instance id, so a value from another process is refused even on the same port.
 *
 * The caller checks `Host`, `Origin` and `Sec-Fetch-Site` before {@link OneTimeLink.exchange},
 * {@link OneTimeLink.admit} and {@link OneTimeLink.logout}.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  BrowserSessions,
  equal,
  type IssuedValue,
  random,
  type SessionLifetimes,
} from './browser-sessions.js';
import { sendError } from './error-reply.js';
import type { PeerUser } from './peer-user.js';

/** The route that ends the caller's browser session and clears its cookie (`POST`, from the page only). */
export const LOGOUT_PATH = '/ui/logout';

/** Options of {@link OneTimeLink}. */
export interface OneTimeLinkOptions {
  /** The server's port: part of the cookie's name, since browsers do not keep cookies apart by port. */
  port: number;
  /** What a reused or wrong link is told (e.g. how to get a new one). */
  refusedLinkMessage: string;
  /** Who is on the other end of a connection: the link and the cookie work only for the server's user. */
  peer: PeerUser;
  /** Session lifetimes other than the defaults of `browser-sessions.ts` (tests). */
  lifetimes?: Partial<SessionLifetimes>;
}

/** `target` (a request target) with the value of its `token` query parameter replaced by `…`, for logs. */
export function withoutToken(target: string): string {
  return target.replace(/([?&]token=)[^&#]*/gi, '$1…');
}

const OTHER_USER = 'this connection belongs to another OS user than the one running this server';

/** One server's one-time links and the browser sessions they open (see the module comment). */
export class OneTimeLink {
  /** The token of the newest link printed, until it is used. */
  private pending: string | undefined;
  private readonly sessions: BrowserSessions;
  /** The session cookie's name. */
  readonly cookieName: string;

  constructor(private readonly options: OneTimeLinkOptions) {
    this.cookieName = `txs_ui_${options.port}`;
    this.sessions = new BrowserSessions(options.lifetimes);
  }

  /**
   * A new link to print: `<origin>/?token=…`. It replaces a link not used yet (only the newest works), and
   * works once.
   */
  newLink(origin: string): string {
    this.pending = random(32);
    return `${origin}/?token=${this.pending}`;
  }

  /**
   * Answers the link's request (path `/` with a `token` query parameter): a 303 to `/` opening a session the
   * first time, a 401 for a used or wrong token or another OS user's connection. Returns false, sending
   * nothing, for any other request.
   */
  async exchange(req: IncomingMessage, res: ServerResponse): Promise<boolean> {
    const target = req.url ?? '/';
    const query = target.startsWith('/?') ? new URLSearchParams(target.slice(2).split('#')[0]) : undefined;
    const presented = query?.get('token');
    if (presented === undefined || presented === null) return false;
    // The user first: the token is then compared and spent with no wait in between (it works once).
    if ((await this.options.peer.of(req.socket)) === 'other') {
      sendError(res, 401, 'Unauthorized', OTHER_USER);
      return true;
    }
    if (this.pending === undefined || !equal(presented, this.pending)) {
      sendError(res, 401, 'Unauthorized', this.options.refusedLinkMessage);
      return true;
    }
    this.pending = undefined;
    res.writeHead(303, {
      location: '/',
      'set-cookie': this.cookie(this.sessions.open()),
      'cache-control': 'no-store',
      'referrer-policy': 'no-referrer',
    });
    res.end();
    return true;
  }

  /**
   * True when the request carries a live session cookie of this server process, from a connection that is
   * not another OS user's. When the session's value is due for replacement, the new cookie is set on `res`
   * (sent with whatever the caller answers).
   */
  async admit(req: IncomingMessage, res?: ServerResponse): Promise<boolean> {
    const value = this.presented(req);
    if (value === undefined) return false;
    if ((await this.options.peer.of(req.socket)) === 'other') return false;
    const checked = this.sessions.check(value);
    if (!checked.admitted) return false;
    if (checked.renewed) res?.setHeader('set-cookie', this.cookie(checked.renewed));
    return true;
  }

  /**
   * Answers {@link LOGOUT_PATH}: ends the session the request's cookie names and clears the cookie (200
   * `{ "loggedOut": true }`). Only a page's own request may (an `Origin` header, which the caller checked is
   * the server's); anything else is 403.
   */
  logout(req: IncomingMessage, res: ServerResponse): void {
    if (req.headers.origin === undefined) {
      sendError(res, 403, 'Forbidden', `${LOGOUT_PATH} is for the dashboard's own page (it sends Origin)`);
      return;
    }
    const value = this.presented(req);
    if (value !== undefined) this.sessions.end(value);
    res.writeHead(200, {
      'content-type': 'application/json',
      'cache-control': 'no-store',
      'set-cookie': `${this.cookieName}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0`,
    });
    res.end(JSON.stringify({ loggedOut: true }));
  }

  private cookie(issued: IssuedValue): string {
    return `${this.cookieName}=${issued.value}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${issued.maxAgeSeconds}`;
  }

  /** The value of this server's cookie in the request, if any (other servers' cookies are not read). */
  private presented(req: IncomingMessage): string | undefined {
    for (const part of (req.headers.cookie ?? '').split(';')) {
      const [name, ...value] = part.trim().split('=');
      if (name === this.cookieName) return value.join('=');
    }
    return undefined;
  }
}
