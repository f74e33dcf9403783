/**
 * How {@link ItemClient} reaches DynamoDB: one request in, one response out. {@link httpTransport} sends over
 * `node:https` (or `node:http` for a local endpoint) with keep-alive connections; local mode passes a
 * transport that hands the request to the embedded dynalite in process (lib/local/embedded-dynamodb.ts).
 *
 * @module
 */
import type { Agent as HttpAgent } from 'node:http';

/** A signed request, ready to send. */
export interface WireRequest {
  /** The endpoint (`https://dynamodb.eu-west-1.amazonaws.com`); requests go to its `/`. */
  url: URL;
  /** Lower-case names. */
  headers: Record<string, string>;
  /** UTF-8 JSON. */
  body: string;
}

/** The answer, whatever its status. */
export interface WireResponse {
  statusCode: number;
  /** Lower-case names. */
  headers: Record<string, string | undefined>;
  body: string;
}

/**
 * Sends one request. Rejects only when no response came (connection refused or reset, timeout), with the
 * Node.js error, whose `code` names the failure (`ECONNRESET`, `ETIMEDOUT`, …).
 */
export type Transport = (request: WireRequest) => Promise<WireResponse>;

/** Options of {@link httpTransport}. */
export interface HttpTransportOptions {
  /** Milliseconds to wait for a connection (default 3,000). */
  connectTimeoutMs?: number;
  /** Milliseconds a request may wait for its response once sent (default 15,000). */
  requestTimeoutMs?: number;
  /** Connections kept per host (default 50, as the AWS SDK's). */
  maxSockets?: number;
}

/** A request that took longer than its timeout; it may or may not have been applied. */
function timeoutError(message: string): Error {
  return Object.assign(new Error(message), { name: 'TimeoutError', code: 'ETIMEDOUT' });
}

/**
 * The transport over Node's HTTP stack, with one keep-alive agent per scheme (`node:https` is loaded on the
 * first HTTPS request only).
 *
 * @example
 * ```ts
 * const client = new ItemClient({ transport: httpTransport({ requestTimeoutMs: 5_000 }) });
 * ```
 */
export function httpTransport(options: HttpTransportOptions = {}): Transport {
  const connectTimeoutMs = options.connectTimeoutMs ?? 3_000;
  const requestTimeoutMs = options.requestTimeoutMs ?? 15_000;
  const maxSockets = options.maxSockets ?? 50;
  const stacks = new Map<
    string,
    Promise<{ request: typeof import('node:http').request; agent: HttpAgent }>
  >();
  const stackFor = (protocol: string) => {
    let stack = stacks.get(protocol);
    if (stack === undefined) {
      stack = (protocol === 'http:' ? import('node:http') : import('node:https')).then((module) => ({
        request: module.request as typeof import('node:http').request,
        agent: new module.Agent({ keepAlive: true, maxSockets }),
      }));
      stacks.set(protocol, stack);
    }
    return stack;
  };
  return async ({ url, headers, body }) => {
    const { request, agent } = await stackFor(url.protocol);
    return new Promise<WireResponse>((resolve, reject) => {
      // Settles once, whichever comes first: the response, a failure of the request or of the response
      // (a connection dropped mid-body), or the timeout; the timer never outlives the request.
      let timer: NodeJS.Timeout | undefined;
      const settle = (outcome: () => void) => {
        clearTimeout(timer);
        outcome();
      };
      const outgoing = request(
        url,
        { method: 'POST', agent, headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('error', (error) => settle(() => reject(error)));
          response.on('end', () => {
            const responseHeaders: Record<string, string | undefined> = {};
            for (const [name, value] of Object.entries(response.headers)) {
              responseHeaders[name] = Array.isArray(value) ? value.join(', ') : value;
            }
            settle(() =>
              resolve({
                statusCode: response.statusCode ?? 0,
                headers: responseHeaders,
                body: Buffer.concat(chunks).toString('utf8'),
              }),
            );
          });
        },
      );
      timer = setTimeout(
        () => outgoing.destroy(timeoutError(`no response from ${url.host} within ${requestTimeoutMs} ms`)),
        requestTimeoutMs,
      );
      timer.unref();
      outgoing.on('socket', (socket) => {
        if (!socket.connecting) return;
        socket.setTimeout(connectTimeoutMs, () =>
          outgoing.destroy(timeoutError(`no connection to ${url.host} within ${connectTimeoutMs} ms`)),
        );
        socket.once('connect', () => socket.setTimeout(0));
      });
      outgoing.on('error', (error) => settle(() => reject(error)));
      outgoing.end(body);
    });
  };
}
