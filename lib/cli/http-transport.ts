/**
 * How {@link TxsClient} sends one request: `node:http` (or `node:https` for an https endpoint), loaded on the
 * first request, instead of the global `fetch`. Node's `fetch` loads undici on its first call, which costs a
 * short-lived `txs` process more than the request itself (docs/performance.md, "The `txs` command").
 *
 * The transport sends the body as given, reads the whole answer as UTF-8 text, follows no redirect (a signed
 * or token-bearing request is never re-sent elsewhere: the client reports the redirect instead), and fails
 * with an error whose `code` says why (`ECONNREFUSED`, `ENOTFOUND`, `ETIMEDOUT`, `CERT_…`, …).
 *
 * @module
 */
import type { ClientRequest, IncomingHttpHeaders, IncomingMessage, RequestOptions } from 'node:http';
import type { Readable } from 'node:stream';

/** One request, ready to send. */
export interface HttpExchange {
  method: string;
  url: URL;
  /** Lower-case header names. */
  headers: Record<string, string>;
  /**
   * The body: JSON text, or bytes, or a stream of them (a workspace archive, opened anew for each attempt;
   * send its length in `content-length`).
   */
  body?: string | Uint8Array | (() => Readable);
  /**
   * The whole exchange (connect, send, read the answer) must end within this many ms; with a streamed body,
   * each wait for the connection to make progress instead (a large upload takes as long as it takes).
   */
  timeoutMs: number;
  /** Aborts the exchange (the request is destroyed; the promise rejects with an `AbortError`). */
  signal?: AbortSignal;
  /**
   * Connect to this Unix domain socket instead of `url`'s host and port (the local server's own socket,
   * `local-socket.ts`); `url` still gives the path and the `Host` header.
   */
  socketPath?: string;
}

/** The answer to an {@link HttpExchange}. */
export interface HttpAnswer {
  status: number;
  /** A header of the answer (name in any case), or undefined. */
  header(name: string): string | undefined;
  /** The body, decoded as UTF-8. */
  text: string;
}

/** Sends one request and reads its whole answer; rejects when no answer arrives. */
export type HttpTransport = (exchange: HttpExchange) => Promise<HttpAnswer>;

/** The error of an exchange that took longer than its `timeoutMs` (`code` is `ETIMEDOUT`). */
export class HttpTimeoutError extends Error {
  readonly code = 'ETIMEDOUT';
  constructor(timeoutMs: number) {
    super(`no answer within ${timeoutMs} ms`);
    this.name = 'HttpTimeoutError';
  }
}

type RequestFunction = (
  options: RequestOptions,
  callback: (answer: IncomingMessage) => void,
) => ClientRequest;

let httpRequest: Promise<RequestFunction> | undefined;
let httpsRequest: Promise<RequestFunction> | undefined;

/** `request` of `node:http` or `node:https`, imported once (https only for https endpoints: TLS is heavy). */
function requestFunctionFor(protocol: string): Promise<RequestFunction> {
  if (protocol === 'https:') {
    httpsRequest ??= import('node:https').then((m) => m.request);
    return httpsRequest;
  }
  httpRequest ??= import('node:http').then((m) => m.request);
  return httpRequest;
}

function headerOf(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name.toLowerCase()];
  return Array.isArray(value) ? value.join(', ') : value;
}

/**
 * The default {@link HttpTransport}: `node:http` / `node:https` with the global agent (keep-alive, so the
 * pages of `txs log` and the polls of `txs wait` reuse one connection).
 *
 * @example
 * ```ts
 * const answer = await nodeHttpTransport({ method: 'GET', url: new URL('http://127.0.0.1:8080/v1/schedulers'), headers: {}, timeoutMs: 5000 });
 * answer.status; // 200
 * ```
 */
export const nodeHttpTransport: HttpTransport = async (exchange) => {
  const request = await requestFunctionFor(exchange.url.protocol);
  const { url, body } = exchange;
  const pipeline = typeof body === 'function' ? (await import('node:stream/promises')).pipeline : undefined;
  return new Promise<HttpAnswer>((resolve, reject) => {
    // A server may answer (and close) before it has read a streamed body: its answer is what counts.
    let answered = false;
    const outgoing = request(
      {
        method: exchange.method,
        protocol: url.protocol,
        ...(exchange.socketPath === undefined
          ? {
              hostname: url.hostname.replace(/^\[(.*)\]$/, '$1'),
              ...(url.port === '' ? {} : { port: Number(url.port) }),
            }
          : { socketPath: exchange.socketPath }),
        path: `${url.pathname}${url.search}`,
        // Over a socket Node would send `Host: localhost`; the endpoint's own authority keeps requests alike.
        headers:
          exchange.socketPath === undefined ? exchange.headers : { host: url.host, ...exchange.headers },
        ...(exchange.signal === undefined ? {} : { signal: exchange.signal }),
      },
      (answer) => {
        answered = true;
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('error', fail);
        answer.on('end', () => {
          clearTimeout(timer);
          resolve({
            status: answer.statusCode ?? 0,
            header: (name) => headerOf(answer.headers, name),
            text: Buffer.concat(chunks).toString('utf8'),
          });
        });
      },
    );
    const timeout = () => outgoing.destroy(new HttpTimeoutError(exchange.timeoutMs));
    const timer = pipeline === undefined ? setTimeout(timeout, exchange.timeoutMs) : undefined;
    timer?.unref();
    function fail(error: Error): void {
      clearTimeout(timer);
      reject(error);
    }
    outgoing.on('error', fail);
    if (typeof body === 'function' && pipeline !== undefined) {
      outgoing.setTimeout(exchange.timeoutMs, timeout);
      pipeline(body(), outgoing).catch((error: Error) => {
        if (!answered) fail(error);
      });
    } else outgoing.end(body);
  });
};
