/**
 * Which OS user is on the other end of a loopback TCP connection: read from Linux's socket tables
 * (`/proc/net/tcp`, `/proc/net/tcp6`), which list each socket's two ends and its owner's uid. The local server
 * (`lib/local/access.ts`) and `txs ui` (`ui-proxy.ts`, through `one-time-link.ts`) both ask {@link PeerUser}
 * whether a request comes from their own user. Where there are no tables (macOS, Windows, a Linux without
 * `/proc`), the answer is `unknown`, never `same`.
 *
 * @module
 */
import { readFile } from 'node:fs/promises';

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

/** The real reader; on systems without `/proc/net` (macOS, Windows) every table reads as ''. */
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
 * The uid owning the client end of a TCP connection in already read tables: the socket whose own end is
 * `peer` and whose other end is `server`. Undefined when not listed.
 */
export function findPeerUid(
  tables: readonly string[],
  peer: { address: string; port: number },
  server: { address: string; port: number },
): number | undefined {
  const peerKey = endpointKey(peer.address, peer.port);
  const serverKey = endpointKey(server.address, server.port);
  // Only rows with the peer's port are decoded (a busy machine lists thousands of sockets).
  const needle = `:${peer.port.toString(16).toUpperCase().padStart(4, '0')} `;
  for (const table of tables) {
    const rows = table.split('\n').filter((line, i) => i === 0 || line.includes(needle));
    const found = parseProcNetTcp(rows.join('\n')).find((s) => s.local === peerKey && s.remote === serverKey);
    if (found) return found.uid;
  }
  return undefined;
}

/** The tables to read for a connection: a plain IPv4 peer of a plain IPv4 server is in `/proc/net/tcp` only. */
function familyOf(peer: { address: string }, server: { address: string }): 4 | undefined {
  return !peer.address.includes(':') && !server.address.includes(':') ? 4 : undefined;
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
  return findPeerUid(await read(familyOf(peer, server)), peer, server);
}

/**
 * Who is on the other end of a connection, for a server run by one OS user:
 * - `same`: the server's own user;
 * - `other`: another user, or a connection the tables do not list (gone, or not a loopback TCP socket);
 * - `unknown`: the platform gives no socket owners (no uid, or no tables: macOS, Windows).
 */
export type PeerVerdict = 'same' | 'other' | 'unknown';

/** The ends of a connection, as `net.Socket` has them. */
export interface ConnectionEnds {
  remoteAddress?: string | undefined;
  remotePort?: number | undefined;
  localAddress?: string | undefined;
  localPort?: number | undefined;
}

/** Options of {@link PeerUser}. */
export interface PeerUserOptions {
  /**
   * The server's uid; default this process's. Where there is none (Windows) every verdict is `unknown`.
   */
  uid?: number;
  /** Reads `/proc/net/tcp{,6}`; injectable for tests. Default {@link readProcNet}. */
  readProcNet?: ProcNetReader;
}

/** Tells whether connections come from the server's own OS user (see {@link PeerVerdict}). */
export class PeerUser {
  /** Verdicts of connections found in the tables: a socket's owner does not change while it is open. */
  private readonly known = new WeakMap<object, 'same' | 'other'>();
  /** Reads `/proc/net`, shared between the lookups of connections opened together. */
  private readonly read: ProcNetReader;

  private readonly uid: number | undefined;

  constructor(options: PeerUserOptions = {}) {
    this.uid = options.uid ?? process.getuid?.();
    this.read = coalescedProcNetReader(options.readProcNet ?? readProcNet);
  }

  /** The verdict for the connection `socket` (a request's `req.socket`). */
  async of(socket: ConnectionEnds): Promise<PeerVerdict> {
    if (this.uid === undefined) return 'unknown';
    const cached = this.known.get(socket);
    if (cached) return cached;
    const { remoteAddress, remotePort, localAddress, localPort } = socket;
    if (
      remoteAddress === undefined ||
      remotePort === undefined ||
      localAddress === undefined ||
      localPort === undefined
    ) {
      return 'other';
    }
    const peer = { address: remoteAddress, port: remotePort };
    const server = { address: localAddress, port: localPort };
    const tables = await this.read(familyOf(peer, server));
    if (tables.every((table) => table.trim() === '')) return 'unknown';
    const owner = findPeerUid(tables, peer, server);
    if (owner === undefined) return 'other';
    const verdict = owner === this.uid ? 'same' : 'other';
    this.known.set(socket, verdict);
    return verdict;
  }
}
