/**
 * How the servers `txs` runs (`txs ui`, and the browser-session code the local server shares) answer an
 * error: the API's `{ error: { code, message } }` body, never cached.
 *
 * @module
 */
import type { ServerResponse } from 'node:http';

/** Sends `status` with the API's error body. */
export function sendError(res: ServerResponse, status: number, code: string, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(JSON.stringify({ error: { code, message } }));
}
