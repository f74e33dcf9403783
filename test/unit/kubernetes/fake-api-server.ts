/**
 * A fake Kubernetes API server on 127.0.0.1 (random port): it records every request and answers from a
 * script of routes. Bodies are shaped as the Kubernetes API reference shows them (`Status` for failures,
 * the object for reads and creates, a `<Kind>List` for lists).
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the fake received. */
export interface SeenRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: IncomingMessage['headers'];
  body: unknown;
}

/** A scripted answer. */
export interface FakeAnswer {
  status: number;
  body: unknown;
}

/** Route handler: answers a request, or undefined for 404 NotFound. */
export type FakeRoute = (request: SeenRequest) => FakeAnswer | undefined;

/** A Kubernetes `Status` failure body (API reference: meta/v1 Status). */
export function kubeStatus(code: number, reason: string, message: string, details: object = {}): FakeAnswer {
  return {
    status: code,
    body: {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message,
      reason,
      details,
      code,
    },
  };
}

/** Starts the fake; `route` decides each answer. */
export async function startFakeKubeApi(route: FakeRoute): Promise<{
  url: string;
  seen: SeenRequest[];
  close: () => Promise<void>;
}> {
  const seen: SeenRequest[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://fake');
      const text = Buffer.concat(chunks).toString('utf8');
      const request: SeenRequest = {
        method: req.method ?? '',
        path: url.pathname,
        query: Object.fromEntries(url.searchParams.entries()),
        headers: req.headers,
        body: text ? (JSON.parse(text) as unknown) : undefined,
      };
      seen.push(request);
      const answer =
        route(request) ?? kubeStatus(404, 'NotFound', `the server could not find the requested resource`);
      const isText = typeof answer.body === 'string';
      res.writeHead(answer.status, { 'content-type': isText ? 'text/plain' : 'application/json' });
      res.end(isText ? answer.body : JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
