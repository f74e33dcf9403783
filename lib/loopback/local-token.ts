/**
 * The local server's access token and loopback names. The server (`npm start`) writes a random token to
 * `~/.txs/local/<port>.token` (directory 0700, file 0600) at start and removes it on a clean shutdown;
 * `TXS_LOCAL_TOKEN_FILE` overrides the path for both. A client such as `curl` may send it as
 * `Authorization: Bearer <token>`; same-user clients on Linux need none (the server checks the connecting
 * socket's owner). `txs` and the TorchX plugin never send it: they use the server's own socket beside it
 * (`local-socket.ts`), and send nothing secret over TCP, where `localhost` may be another user's listener.
 *
 * @module
 */
import { homedir } from 'node:os';
import path from 'node:path';

/**
 * The local server's route that makes a new link (`POST`, answered `{ "url": … }` to an admitted caller):
 * how `txs ui` gives a browser a way in to a running local server.
 */
export const NEW_LINK_PATH = '/ui/link';

/** Environment variable that overrides where the local server's token file is. */
export const LOCAL_TOKEN_FILE_ENV = 'TXS_LOCAL_TOKEN_FILE';

/**
 * The token file of the local server listening on `port`: `$TXS_LOCAL_TOKEN_FILE`, else
 * `<home>/.txs/local/<port>.token`.
 *
 * @example
 * ```ts
 * localTokenFile(8080, {}, '/home/me'); // '/home/me/.txs/local/8080.token'
 * ```
 */
export function localTokenFile(
  port: number,
  env: Readonly<Record<string, string | undefined>> = process.env,
  home: string = homedir(),
): string {
  const override = env[LOCAL_TOKEN_FILE_ENV];
  if (override !== undefined && override !== '') return path.resolve(override);
  return path.join(home, '.txs', 'local', `${port}.token`);
}

/**
 * True when `hostname` (as `URL.hostname` gives it) is a loopback address: `localhost`, 127.0.0.0/8 or
 * `[::1]`.
 */
export function isLoopbackHostname(hostname: string): boolean {
  const host = hostname.toLowerCase();
  if (host === 'localhost' || host === '[::1]' || host === '::1') return true;
  const octets = host.split('.');
  return (
    octets.length === 4 && octets[0] === '127' && octets.every((o) => /^\d{1,3}$/.test(o) && Number(o) <= 255)
  );
}

/** True when `authority` (a `Host` header value or an origin's host) is loopback with exactly `port`. */
export function isLoopbackAuthority(authority: string, port: number): boolean {
  let url: URL;
  try {
    url = new URL(`http://${authority}`);
  } catch {
    return false;
  }
  if (url.username !== '' || url.password !== '' || url.pathname !== '/' || url.search !== '') return false;
  const actualPort = url.port === '' ? 80 : Number(url.port);
  return actualPort === port && isLoopbackHostname(url.hostname);
}

/** True when `origin` (an `Origin` header value) is exactly `http://<loopback name>:<port>`. */
export function isLoopbackOrigin(origin: string, port: number): boolean {
  try {
    const url = new URL(origin);
    return url.protocol === 'http:' && url.origin === origin && isLoopbackAuthority(url.host, port);
  } catch {
    return false;
  }
}
