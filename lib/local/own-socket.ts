/**
 * The local server's own socket (`lib/loopback/local-socket.ts`): a Unix domain socket beside the token file,
 * in a directory only the server's OS user can enter, so every connection through it is that user's. A
 * socket left by a server that was killed is removed at start (only when it is ours and nothing answers on
 * it); a clean shutdown removes it.
 *
 * @module
 */
import { chmodSync, lstatSync, type Stats, unlinkSync } from 'node:fs';
import { createServer, type RequestListener, type Server } from 'node:http';
import { connect } from 'node:net';
import path from 'node:path';
import { MAX_SOCKET_PATH_BYTES, privateDirProblem } from '../loopback/local-socket.js';
import { DataDirError } from './private-files.js';

/** A listening own socket, or why the server has none. */
export type OwnSocketListener =
  | { file: string; skipped?: undefined; close(): Promise<void> }
  | { file?: undefined; skipped: string; close(): Promise<void> };

function lstatOrUndefined(file: string): Stats | undefined {
  try {
    return lstatSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** True when something accepts connections on the socket `file`. */
function answers(file: string): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const probe = connect(file);
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ECONNREFUSED' || error.code === 'ENOENT') resolve(false);
      else reject(error);
    });
  });
}

/**
 * Removes a socket a dead server left at `file`.
 *
 * @throws DataDirError when `file` is not our socket, or a live server still listens on it.
 */
async function removeStaleSocket(file: string, uid: number): Promise<void> {
  const info = lstatOrUndefined(file);
  if (info === undefined) return;
  if (!info.isSocket() || info.uid !== uid) {
    throw new DataDirError(
      `${file} is in the way of the local server's socket and is not one of yours; remove it`,
    );
  }
  if (await answers(file)) {
    throw new DataDirError(`another local server listens on ${file}; stop it, or give this one another PORT`);
  }
  unlinkSync(file);
}

/**
 * Listens with `handler` on the Unix socket `file` when its directory is private to `uid` (see
 * `privateDirProblem`); otherwise (Windows, a shared directory, a path too long for a socket) the server has
 * no own socket and says why.
 *
 * @throws DataDirError when another live server, or a file that is not our socket, holds `file`.
 */
export async function listenOnOwnSocket(
  file: string,
  uid: number | undefined,
  handler: RequestListener,
): Promise<OwnSocketListener> {
  const none = (skipped: string): OwnSocketListener => ({ skipped, close: async () => {} });
  if (uid === undefined || process.platform === 'win32')
    return none('this platform has no Unix sockets with owners');
  if (Buffer.byteLength(file) > MAX_SOCKET_PATH_BYTES) {
    return none(`${file} is longer than ${MAX_SOCKET_PATH_BYTES} bytes, too long for a socket`);
  }
  const dir = path.dirname(file);
  const problem = privateDirProblem(dir, lstatSync(dir), uid);
  if (problem !== undefined) return none(problem);
  await removeStaleSocket(file, uid);
  const server: Server = createServer(handler);
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(file, ok);
  });
  chmodSync(file, 0o600);
  const { ino } = lstatSync(file);
  return {
    file,
    close: () =>
      new Promise<void>((ok) => {
        server.close(() => {
          // Node removes the socket as it closes; make sure, without touching a file that is not this one.
          try {
            if (lstatOrUndefined(file)?.ino === ino) unlinkSync(file);
          } catch {
            // Gone meanwhile.
          }
          ok();
        });
        server.closeAllConnections();
      }),
  };
}
