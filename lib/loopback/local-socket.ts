/**
 * The local server's own socket: a Unix domain socket `<port>.sock` beside its token file (by default
 * `~/.txs/local/8080.sock`, directory 0700). Only the OS user owning that directory can reach it, so a
 * connection through it is that user's, and a client that proves the socket is its own knows the server on the
 * other end runs as itself. `txs` and the TorchX plugin talk to a loopback endpoint through it: no token is
 * needed, the address `localhost` resolves to no longer matters, and the caller's environment and working
 * directory go only through it (never over TCP, where another user may have bound `[::1]:PORT`).
 *
 * @module
 */
import type { Stats } from 'node:fs';
import { lstat } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import { isLoopbackHostname, localTokenFile } from './local-token.js';

/**
 * Longest socket path (bytes) every platform accepts: `sun_path` holds 108 bytes on Linux and 104 on macOS,
 * with a final NUL; a longer path is silently truncated by the kernel, so it is not used at all.
 */
export const MAX_SOCKET_PATH_BYTES = 103;

/**
 * The socket of the local server listening on `port`: `<port>.sock` in the directory of its token file
 * (`~/.txs/local/`, or that of `$TXS_LOCAL_TOKEN_FILE`).
 *
 * @example
 * ```ts
 * localSocketFile(8080, {}, '/home/me'); // '/home/me/.txs/local/8080.sock'
 * ```
 */
export function localSocketFile(
  port: number,
  env: Readonly<Record<string, string | undefined>> = process.env,
  home: string = homedir(),
): string {
  return socketBesideToken(localTokenFile(port, env, home), port);
}

/** The socket of the local server on `port` whose token file is `tokenFile`: `<port>.sock` beside it. */
export function socketBesideToken(tokenFile: string, port: number): string {
  return path.join(path.dirname(tokenFile), `${port}.sock`);
}

/**
 * Why `dir` (its `lstat`) cannot hold a socket only `uid` reaches, or undefined when it can: a real directory
 * (not a symbolic link) owned by `uid` with no group or other permission bits.
 */
export function privateDirProblem(dir: string, info: Stats, uid: number): string | undefined {
  if (info.isSymbolicLink()) return `${dir} is a symbolic link`;
  if (!info.isDirectory()) return `${dir} is not a directory`;
  if (info.uid !== uid) return `${dir} belongs to uid ${info.uid}, not to you (uid ${uid})`;
  if ((info.mode & 0o077) !== 0) {
    return `${dir} is open to other users (mode ${(info.mode & 0o777).toString(8)}, not 700)`;
  }
  return undefined;
}

/** The outcome of {@link findOwnSocket}: the proven socket, or why there is none. */
export type OwnSocket = { path: string; why?: undefined } | { path?: undefined; why: string };

/** What {@link findOwnSocket} reads; injectable for tests. */
export interface OwnSocketContext {
  env?: Readonly<Record<string, string | undefined>>;
  home?: string;
  /** The caller's uid; undefined where there is none (Windows): then no socket is ever proven. */
  uid?: number | undefined;
}

/**
 * The local server's socket for `endpoint` when it is proven to be the caller's own: the endpoint is a
 * loopback `http:` URL, and `lstat` (which never follows a symbolic link) shows a socket owned by the caller
 * in a directory owned by the caller with no group or other access. Anything else gives the reason instead.
 *
 * @example
 * ```ts
 * const own = await findOwnSocket('http://localhost:8080');
 * if (own.path !== undefined) {
 *   // connect with { socketPath: own.path }
 * }
 * ```
 */
export async function findOwnSocket(endpoint: string, context: OwnSocketContext = {}): Promise<OwnSocket> {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return { why: `${endpoint} is not a URL` };
  }
  if (url.protocol !== 'http:' || !isLoopbackHostname(url.hostname)) {
    return { why: `${url.origin} is not the local server (not a loopback http:// address)` };
  }
  const uid = 'uid' in context ? context.uid : process.getuid?.();
  if (uid === undefined) return { why: 'this platform has no OS user ids to prove a socket is yours' };
  const port = url.port === '' ? 80 : Number(url.port);
  const file = localSocketFile(port, context.env ?? process.env, context.home ?? homedir());
  if (Buffer.byteLength(file) > MAX_SOCKET_PATH_BYTES) {
    return { why: `${file} is longer than ${MAX_SOCKET_PATH_BYTES} bytes, too long for a socket` };
  }
  const dir = path.dirname(file);
  let dirInfo: Stats;
  let info: Stats;
  try {
    dirInfo = await lstat(dir);
    info = await lstat(file);
  } catch {
    return { why: `no local server socket at ${file}` };
  }
  const dirProblem = privateDirProblem(dir, dirInfo, uid);
  if (dirProblem !== undefined) return { why: `${file} is not proven yours: ${dirProblem}` };
  if (!info.isSocket()) return { why: `${file} is not a socket` };
  if (info.uid !== uid) return { why: `${file} belongs to uid ${info.uid}, not to you (uid ${uid})` };
  return { path: file };
}
