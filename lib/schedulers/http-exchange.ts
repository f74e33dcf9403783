/**
 * One request and its whole answer over `node:http` or `node:https`, for the schedulers whose backends speak
 * plain HTTP (the Kubernetes API, the Docker Engine at its socket).
 *
 * @module
 */
import type { ClientRequest, IncomingMessage } from 'node:http';
import { BackendError } from './errors.js';

/** The status and the whole body of an answer. */
export interface HttpAnswer {
  status: number;
  body: Buffer;
}

/**
 * Sends `payload` on the request `open` makes (with `onResponse` as its response listener) and reads the
 * whole answer. A request without an answer within `timeoutMs` is destroyed.
 *
 * @throws BackendError (retryable) naming `target` (e.g. `the Docker Engine at /var/run/docker.sock`) when
 * the request fails before an answer: unreachable, refused, timed out.
 */
export function httpExchange(
  open: (onResponse: (res: IncomingMessage) => void) => ClientRequest,
  options: { timeoutMs: number; target: string; payload?: string | undefined },
): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const req = open((res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${options.timeoutMs} ms`)));
    req.on('error', (cause) =>
      reject(new BackendError(`cannot reach ${options.target}: ${cause.message}`, true, { cause })),
    );
    req.end(options.payload);
  });
}
