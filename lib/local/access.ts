/**
 * Who may talk to the local server. A request is admitted only when
 *
 * 1. its `Host` (and `Origin`, when present) is a loopback name with the server's port, and the browser does
 *    not mark it cross-site (`Sec-Fetch-Site`) — so a web page cannot reach the server through DNS
 *    rebinding or a cross-origin form/`fetch`; refused with 403 otherwise;
 * 2. it carries `Authorization: Bearer <token>` with the server's token, or (Linux) the connecting socket
 *    belongs to the server's own OS user, read from `/proc/net/tcp{,6}` (`lib/loopback/peer-user.ts`) — so other
 *    users of a shared machine cannot drive it, and `curl` from the same user works unchanged — or it carries
 *    the live session cookie of a browser that opened the server's one-time link
 *    (`lib/loopback/one-time-link.ts`: how a browser gets in where there is no `/proc`), from a connection that is
 *    not another OS user's; refused with 401 otherwise.
 *
 * A request through the server's own Unix socket (`own-socket.ts`: in a directory only the server's OS user
 * can enter) is that user's by construction, and is admitted without these checks (no browser reaches it).
 *
 * @module
 */
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isLoopbackAuthority, isLoopbackOrigin } from '../loopback/local-token.js';
import type { OneTimeLink } from '../loopback/one-time-link.js';
import type { PeerUser } from '../loopback/peer-user.js';

/** The socket-table reader the server takes (for tests), kept where the server's callers look for it. */
export { type ProcNetReader, readProcNet } from '../loopback/peer-user.js';

/** A refusal: the status code and the API's `{ error: { code, message } }` body. */
export interface Refusal {
  statusCode: 401 | 403;
  code: 'Forbidden' | 'Unauthorized';
  message: string;
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Checks `Host`, `Origin` and `Sec-Fetch-Site`: the request must come from this machine's loopback names with
 * the server's port, and not from another site's page.
 *
 * @returns undefined when acceptable, else a 403 refusal saying why.
 */
export function checkHostAndOrigin(req: IncomingMessage, port: number): Refusal | undefined {
  const forbidden = (message: string): Refusal => ({ statusCode: 403, code: 'Forbidden', message });
  const host = single(req.headers.host);
  if (host === undefined || !isLoopbackAuthority(host, port)) {
    return forbidden(
      `Host ${JSON.stringify(host ?? '')} is not this local server; it answers only to localhost, 127.0.0.1 or [::1] ` +
        `with port ${port} (a foreign Host is how a web page reaches it through DNS rebinding)`,
    );
  }
  const origin = single(req.headers.origin);
  if (origin !== undefined) {
    if (!isLoopbackOrigin(origin, port)) {
      return forbidden(
        `Origin ${JSON.stringify(origin)} may not call this local server; only pages it serves itself may ` +
          '(cross-origin requests from web pages are refused)',
      );
    }
  }
  const site = single(req.headers['sec-fetch-site']);
  if (site !== undefined && site !== 'same-origin' && site !== 'none') {
    return forbidden(`a ${site} request from a web page may not call this local server`);
  }
  return undefined;
}

/** What {@link LocalAccess} needs. */
export interface LocalAccessOptions {
  /** The server's port (after listening). */
  port: number;
  /** The token a client may present. */
  token: string;
  /** Where the token is, for the refusal message. */
  tokenFile: string;
  /** Who is on the other end of a connection (the server's own OS user or not). */
  peer: PeerUser;
  /** The one-time links whose session cookie admits a browser (of the same user, where that can be read). */
  link?: OneTimeLink;
}

function bearerToken(req: IncomingMessage): string | undefined {
  const value = single(req.headers.authorization);
  const match = value === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(value);
  return match?.[1];
}

/** The admission check of the local server (see the module comment). */
export class LocalAccess {
  private readonly token: Buffer;

  /** The server's port. */
  readonly port: number;

  constructor(private readonly options: LocalAccessOptions) {
    this.token = Buffer.from(options.token, 'utf8');
    this.port = options.port;
  }

  /**
   * Undefined when `req` may proceed, else the refusal to send. A browser session's renewed cookie, when due,
   * is set on `res`. `viaOwnSocket`: `req` came through the server's own Unix socket, so it is the server's own
   * user's.
   */
  async check(
    req: IncomingMessage,
    res?: ServerResponse,
    viaOwnSocket = false,
  ): Promise<Refusal | undefined> {
    if (viaOwnSocket) return undefined;
    const hostRefusal = checkHostAndOrigin(req, this.options.port);
    if (hostRefusal) return hostRefusal;
    const presented = bearerToken(req);
    if (presented !== undefined) {
      const given = Buffer.from(presented, 'utf8');
      if (given.length === this.token.length && timingSafeEqual(given, this.token)) return undefined;
    }
    if (await this.options.link?.admit(req, res)) return undefined;
    // A stale token (from a server that ran on this port before) does not lock its own user out.
    if ((await this.options.peer.of(req.socket)) === 'same') return undefined;
    return this.unauthorized(
      presented === undefined
        ? 'the request has no token or live session cookie and does not come from the server’s own OS user'
        : 'the bearer token is not this server’s',
    );
  }

  private unauthorized(why: string): Refusal {
    return {
      statusCode: 401,
      code: 'Unauthorized',
      message:
        `${why}. Send Authorization: Bearer <token> with the token in ${this.options.tokenFile} ` +
        '(readable only by the user running the server; txs sends it by itself); in a browser, open the ' +
        'one-time link npm start printed (txs ui prints a new one)',
    };
  }
}
