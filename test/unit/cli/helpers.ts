/**
 * Test doubles for the CLI: an in-memory CliIO and a tiny node:http server standing in for the API.
 */
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServer as createTcpServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AppResponse, CliIO } from '../../../lib/cli/index.js';

export interface MemoryIO extends CliIO {
  readonly out: () => string;
  readonly errText: () => string;
  /** Simulates Ctrl-C. */
  interrupt(): void;
  /** Every sleep requested, in ms. */
  readonly sleeps: number[];
}

/** A CliIO writing to strings, with files from `files`, a virtual clock advanced by sleep(). */
export function memoryIO(
  options: {
    env?: Record<string, string>;
    files?: Record<string, string>;
    stdin?: string;
    tty?: boolean;
    cwd?: string;
    home?: string;
    now?: number;
    onSleep?: (ms: number, count: number) => void;
  } = {},
): MemoryIO {
  let stdout = '';
  let stderr = '';
  let clock = options.now ?? Date.parse('2026-01-15T12:00:00Z');
  const handlers: (() => void)[] = [];
  const sleeps: number[] = [];
  const files = options.files ?? {};
  return {
    stdout: {
      write: (t) => {
        stdout += t;
      },
      isTTY: options.tty ?? false,
    },
    stderr: {
      write: (t) => {
        stderr += t;
      },
      isTTY: options.tty ?? false,
    },
    env: { ...(options.env ?? {}) },
    cwd: options.cwd ?? '/work/project',
    homeDir: options.home ?? '/home/user',
    readFile: async (path) => {
      const text = files[path];
      if (text === undefined) {
        const error = new Error(`ENOENT: no such file or directory, open '${path}'`) as NodeJS.ErrnoException;
        error.code = 'ENOENT';
        throw error;
      }
      return text;
    },
    readStdin: async () => options.stdin ?? '',
    now: () => clock,
    sleep: async (ms, signal) => {
      signal?.throwIfAborted();
      sleeps.push(ms);
      clock += ms;
      options.onSleep?.(ms, sleeps.length);
      await new Promise((resolve) => setImmediate(resolve));
      signal?.throwIfAborted();
    },
    onInterrupt: (handler) => {
      handlers.push(handler);
      return () => {
        const i = handlers.indexOf(handler);
        if (i >= 0) handlers.splice(i, 1);
      };
    },
    out: () => stdout,
    errText: () => stderr,
    interrupt: () => {
      for (const h of [...handlers]) h();
    },
    sleeps,
  };
}

export interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  body: unknown;
}

export interface StubReply {
  status?: number;
  body?: unknown;
  /** Raw text body (instead of JSON). */
  text?: string;
  headers?: Record<string, string>;
}

export type StubHandler = (
  request: RecordedRequest,
) => StubReply | undefined | Promise<StubReply | undefined>;

export interface StubServer {
  url: string;
  requests: RecordedRequest[];
  /**
   * The environment that makes `txs` find this server's own socket (as the local server's: `<port>.sock` in a
   * private directory beside the token file), so it counts as the caller's own server.
   */
  ownSocketEnv: { TXS_LOCAL_TOKEN_FILE: string };
  /** The paths of requests that came through the own socket. */
  viaSocket: string[];
  close(): Promise<void>;
}

/**
 * Starts an HTTP server on 127.0.0.1 that answers with `handler` (404 RouteNotFound when it returns
 * undefined) and records every request.
 */
export async function startStubServer(handler: StubHandler): Promise<StubServer> {
  const requests: RecordedRequest[] = [];
  const viaSocket: string[] = [];
  const listener = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const url = new URL(req.url ?? '/', 'http://stub');
      const raw = Buffer.concat(chunks).toString('utf8');
      const recorded: RecordedRequest = {
        method: req.method ?? 'GET',
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        body: raw === '' ? undefined : JSON.parse(raw),
      };
      requests.push(recorded);
      const reply = (await handler(recorded)) ?? {
        status: 404,
        body: { error: { code: 'RouteNotFound', message: `no route ${recorded.method} ${recorded.path}` } },
      };
      const text = reply.text ?? JSON.stringify(reply.body ?? {});
      res.writeHead(reply.status ?? 200, {
        'content-type': reply.text === undefined ? 'application/json' : 'text/html',
        ...(reply.headers ?? {}),
      });
      res.end(text);
    });
  };
  const server: Server = createServer(listener);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const dir = mkdtempSync(join(tmpdir(), 'txs-stub-'));
  const socket: Server = createServer((req, res) => {
    viaSocket.push(req.url ?? '');
    listener(req, res);
  });
  socket.listen(join(dir, `${port}.sock`));
  await once(socket, 'listening');
  const closeServer = (s: Server) =>
    new Promise<void>((resolve) => {
      s.closeAllConnections();
      s.close(() => resolve());
    });
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    ownSocketEnv: { TXS_LOCAL_TOKEN_FILE: join(dir, `${port}.token`) },
    viaSocket,
    close: async () => {
      await Promise.all([closeServer(server), closeServer(socket)]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** An API error reply. */
export function apiError(status: number, code: string, message: string, details?: unknown[]): StubReply {
  return { status, body: { error: { code, message, ...(details ? { details } : {}), requestId: 'req-1' } } };
}

/** A local port nothing listens on (for "connection refused"). */
export async function closedPort(): Promise<number> {
  const server = createTcpServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The API's answer for the app `local_cwd://torchx/echo-1` in `state`, with `overrides`. */
export function appResponse(
  state: AppResponse['status']['state'],
  overrides: Partial<AppResponse> = {},
): AppResponse {
  return {
    handle: 'local_cwd://torchx/echo-1',
    scheduler: 'local_cwd',
    session: 'torchx',
    appId: 'echo-1',
    name: 'echo',
    createdAt: '2026-01-15T12:00:00.000Z',
    status: { state, numRestarts: 0, msg: '', structuredErrorMsg: '<NONE>', roles: [] },
    app: { name: 'echo', roles: [], metadata: {} },
    history: [],
    ...overrides,
  };
}
