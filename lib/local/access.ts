/**
 * Who may talk to the local server. A request is admitted only when
 *
 * 1. its `Host` (and `Origin`, when present) is a loopback name with the server's port, and the browser does
 *    not mark it cross-site (`Sec-Fetch-Site`) — so a web page cannot reach the server through DNS
 *    rebinding or a cross-origin form/`fetch`; refused with 403 otherwise;
 * 2. it carries `Authorization: Bearer <token>` with the server's token, or the session cookie of a browser
 *    that opened the server's one-time link (`lib/cli/one-time-link.ts`: how a browser gets in where there is
 *    no `/proc`), or (Linux) the connecting socket belongs to the server's own OS user, read from
 *    `/proc/net/tcp{,6}` — so other users of a shared machine cannot drive it, and `curl` from the same user
 *    works unchanged; refused with 401 otherwise.
 *
 * A request through the server's own Unix socket (`own-socket.ts`: in a directory only the server's OS user
 * can enter) is that user's by construction, and is admitted without these checks (no browser reaches it).
 *
 * @module
 */
import { timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { isLoopbackAuthority, isLoopbackOrigin } from '../cli/local-token.js';
import type { OneTimeLink } from '../cli/one-time-link.js';

/** A refusal: the status code and the API's `{ error: { code, message } }` body. */
export interface Refusal {
  statusCode: 401 | 403;
  code: 'Forbidden' | 'Unauthorized';
  message: string;
}

/** One row of `/proc/net/tcp` or `/proc/net/tcp6`. */
export interface ProcNetSocket {
  /** Normalised `address:port` of the socket's own end. */
  local: string;
  /** Normalised `address:port` of the other end. */
  remote: string;
  uid: number;
}

/**
 * Reads the socket tables: the text of `/proc/net/tcp` and `/proc/net/tcp6` (missing files read as ''); with
 * `family` 4, only `/proc/net/tcp` (where a plain IPv4 peer of an IPv4 listener is listed).
 */
export type ProcNetReader = (family?: 4) => Promise<string[]>;

/** The real reader; on systems without `/proc/net` it returns nothing, so only the token admits. */
export const readProcNet: ProcNetReader = async (family) =>
  Promise.all(
    (family === 4 ? ['/proc/net/tcp'] : ['/proc/net/tcp', '/proc/net/tcp6']).map((file) =>
      readFile(file, 'utf8').catch(() => ''),
    ),
  );

/**
 * A reader that shares reads between concurrent lookups (each read of `/proc/net` costs milliseconds of
 * system time): a lookup joins the next read that starts after it asked, never one already under way, so the
 * table it sees always lists its connection (accepted before it asked).
 */
export function coalescedProcNetReader(read: ProcNetReader): ProcNetReader {
  const state = new Map<4 | undefined, { next?: Promise<string[]>; running?: Promise<unknown> }>();
  return (family) => {
    const s = state.get(family) ?? {};
    state.set(family, s);
    if (s.next) return s.next;
    const next = (async () => {
      await s.running?.catch(() => undefined);
      s.next = undefined;
      const running = read(family);
      s.running = running;
      return running;
    })();
    s.next = next;
    return next;
  };
}

/** `hostname:port` of an address as Node reports it; IPv4-mapped IPv6 becomes plain IPv4. */
export function endpointKey(address: string, port: number): string {
  const lowered = address.toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lowered);
  return `${mapped ? mapped[1] : lowered}:${port}`;
}

function hexWordBytes(word: string): number[] {
  // Each 32-bit word is printed in host byte order (little-endian on every platform Linux runs us on).
  const bytes: number[] = [];
  for (let i = 6; i >= 0; i -= 2) bytes.push(Number.parseInt(word.slice(i, i + 2), 16));
  return bytes;
}

/** Decodes a `/proc/net/tcp*` address (`0100007F:1F90`, or 32 hex digits for IPv6) to {@link endpointKey} form. */
export function decodeProcAddress(text: string): string | undefined {
  const [hex, portHex] = text.split(':');
  if (hex === undefined || portHex === undefined) return undefined;
  const port = Number.parseInt(portHex, 16);
  if (hex.length === 8) return endpointKey(hexWordBytes(hex).join('.'), port);
  if (hex.length !== 32) return undefined;
  const bytes = [0, 8, 16, 24].flatMap((i) => hexWordBytes(hex.slice(i, i + 8)));
  if (bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff) {
    return endpointKey(bytes.slice(12).join('.'), port);
  }
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((((bytes[i] ?? 0) << 8) | (bytes[i + 1] ?? 0)).toString(16));
  // Compress like Node prints addresses (only ::1 matters for a loopback server; keep the rest exact).
  const full = groups.join(':');
  return endpointKey(full === '0:0:0:0:0:0:0:1' ? '::1' : full, port);
}

/** Parses the rows of a `/proc/net/tcp` or `/proc/net/tcp6` table; malformed rows are skipped. */
export function parseProcNetTcp(text: string): ProcNetSocket[] {
  const sockets: ProcNetSocket[] = [];
  for (const line of text.split('\n').slice(1)) {
    const fields = line.trim().split(/\s+/);
    // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
    const local = decodeProcAddress(fields[1] ?? '');
    const remote = decodeProcAddress(fields[2] ?? '');
    const uid = Number(fields[7]);
    if (local === undefined || remote === undefined || !Number.isInteger(uid)) continue;
    sockets.push({ local, remote, uid });
  }
  return sockets;
}

/**
 * The OS user owning the client end of a TCP connection to this machine: the socket whose own end is
 * `peer` and whose other end is `server`. Undefined when not found (not Linux, or the client is gone).
 */
export async function peerUid(
  peer: { address: string; port: number },
  server: { address: string; port: number },
  read: ProcNetReader = readProcNet,
): Promise<number | undefined> {
  const peerKey = endpointKey(peer.address, peer.port);
  const serverKey = endpointKey(server.address, server.port);
  // Only rows with the peer's port are decoded (a busy machine lists thousands of sockets).
  const needle = `:${peer.port.toString(16).toUpperCase().padStart(4, '0')} `;
  // A plain IPv4 peer of a plain IPv4 server is in `/proc/net/tcp` only (IPv4-mapped ones are in tcp6).
  const ipv4 = !peer.address.includes(':') && !server.address.includes(':');
  for (const table of await read(ipv4 ? 4 : undefined)) {
    const rows = table.split('\n').filter((line, i) => i === 0 || line.includes(needle));
    const found = parseProcNetTcp(rows.join('\n')).find((s) => s.local === peerKey && s.remote === serverKey);
    if (found) return found.uid;
  }
  return undefined;
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
  /** The server's uid; undefined where there is none (Windows): then only the token admits. */
  uid: number | undefined;
  /** Reads `/proc/net/tcp{,6}`; injectable for tests. */
  readProcNet?: ProcNetReader;
  /** The one-time links whose session cookie admits a browser. */
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
  /** Sockets already found to belong to the server's user (keep-alive connections are checked once). */
  private readonly trusted = new WeakSet<object>();

  /** The server's port. */
  readonly port: number;

  /** Reads `/proc/net`, shared between the lookups of connections opened together. */
  private readonly readProcNet: ProcNetReader;

  constructor(private readonly options: LocalAccessOptions) {
    this.token = Buffer.from(options.token, 'utf8');
    this.port = options.port;
    this.readProcNet = coalescedProcNetReader(options.readProcNet ?? readProcNet);
  }

  /**
   * Undefined when `req` may proceed, else the refusal to send. `viaOwnSocket`: `req` came through the
   * server's own Unix socket, so it is the server's own user's.
   */
  async check(req: IncomingMessage, viaOwnSocket = false): Promise<Refusal | undefined> {
    if (viaOwnSocket) return undefined;
    const hostRefusal = checkHostAndOrigin(req, this.options.port);
    if (hostRefusal) return hostRefusal;
    const presented = bearerToken(req);
    if (presented !== undefined) {
      const given = Buffer.from(presented, 'utf8');
      if (given.length === this.token.length && timingSafeEqual(given, this.token)) return undefined;
    }
    if (this.options.link?.admits(req)) return undefined;
    // A stale token (from a server that ran on this port before) does not lock its own user out.
    if (await this.sameUser(req)) return undefined;
    return this.unauthorized(
      presented === undefined
        ? 'the request has no token or session cookie and does not come from the server’s own OS user'
        : 'the bearer token is not this server’s',
    );
  }

  private async sameUser(req: IncomingMessage): Promise<boolean> {
    const socket = req.socket;
    if (this.trusted.has(socket)) return true;
    const { uid } = this.options;
    const { remoteAddress, remotePort, localAddress, localPort } = socket;
    if (
      uid === undefined ||
      remoteAddress === undefined ||
      remotePort === undefined ||
      localAddress === undefined ||
      localPort === undefined
    ) {
      return false;
    }
    const owner = await peerUid(
      { address: remoteAddress, port: remotePort },
      { address: localAddress, port: localPort },
      this.readProcNet,
    );
    if (owner !== uid) return false;
    this.trusted.add(socket);
    return true;
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
