/**
 * The local API server (`npm start`): HTTP requests become API Gateway proxy events for the same handlers
 * the stack deploys; DynamoDB is dynalite in-process (persisted under the data directory, or in memory);
 * the local_cwd scheduler runs jobs as processes here, and its state changes travel as EventBridge-shaped
 * events through an in-process bus to the same state-change function. Never used in the deployed stack.
 *
 * @module
 */
import { mkdirSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { userInfo } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ResourceNotFoundException,
} from '@aws-sdk/client-dynamodb';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import dynalite from 'dynalite';
import { ROUTES, type RouteDefinition } from '../../functions/routes.js';
import { closeRunner, configureLocalMode } from '../../functions/shared/container.js';
import { ENV } from '../../functions/shared/env-names.js';
import type { AppStateChangeEvent } from '../runner/index.js';
import { createTableInput } from '../store/index.js';
import { lambdaContext, proxyEvent } from './lambda-events.js';

/** Options of {@link startLocalServer}. */
export interface LocalServerOptions {
  /** Port; 0 picks a free one. Default 8080. */
  port?: number;
  /** Interface; default 127.0.0.1 (never exposed beyond this machine by default). */
  host?: string;
  /** Where records and local job logs live. Default `.txs-data` in the working directory. */
  dataDir?: string;
  /** Keep DynamoDB in memory (nothing persisted). */
  inMemory?: boolean;
  /** Print accepted state changes and requests. */
  verbose?: boolean;
  /** Schedulers to enable. Default {@link LOCAL_SCHEDULERS}. */
  schedulers?: string[];
  /** Reconciler period (ms); 0 disables it. Default 60 s. */
  reconcileEveryMs?: number;
  /**
   * Use the DynamoDB at this endpoint (e.g. moto's, for `npm run test:moto`) instead of the embedded dynalite;
   * the table is created there from `lib/store/table.ts` unless it exists. Region and credentials come from
   * the environment (`AWS_REGION`); `dataDir` and `inMemory` then concern local job logs only.
   */
  dynamodbEndpoint?: string;
}

/** A running local server. */
export interface LocalServer {
  url: string;
  port: number;
  dataDir: string;
  close(): Promise<void>;
}

/** The table name local mode uses. */
export const LOCAL_TABLE_NAME = 'txs-apps';

/** Schedulers local mode enables by default: local_cwd runs jobs; the others answer dry runs offline. */
export const LOCAL_SCHEDULERS: readonly string[] = [
  'local_cwd',
  'aws_batch',
  'aws_sagemaker',
  'local_docker',
  'lsf',
  'kubernetes',
  'kubernetes_mcad',
];

type ProxyHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

interface CompiledRoute {
  route: RouteDefinition;
  pattern: RegExp;
  params: string[];
}

function compile(route: RouteDefinition): CompiledRoute {
  const params: string[] = [];
  const source = route.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    params.push(name);
    return '([^/]+)';
  });
  return { route, pattern: new RegExp(`^${source}/?$`), params };
}

function readBody(req: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  return new Promise((resolveBody, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) chunks.push(chunk);
    });
    req.on('end', () => resolveBody(chunks.length === 0 ? undefined : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function toEvent(
  req: IncomingMessage,
  url: URL,
  route: CompiledRoute,
  match: RegExpExecArray,
  body: Buffer | undefined,
  defaultUser: string,
): APIGatewayProxyEvent {
  const headers: Record<string, string[]> = {};
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i] as string;
    headers[name] = [...(headers[name] ?? []), req.rawHeaders[i + 1] as string];
  }
  const query: Record<string, string[]> = {};
  for (const [key, value] of url.searchParams) query[key] = [...(query[key] ?? []), value];
  const pathParameters: Record<string, string> = {};
  route.params.forEach((name, i) => {
    pathParameters[name] = match[i + 1] as string;
  });
  const isText = body === undefined || /json|text/.test(req.headers['content-type'] ?? 'application/json');
  return proxyEvent({
    method: req.method ?? 'GET',
    resource: route.route.path,
    path: url.pathname,
    headers,
    query,
    pathParameters: route.params.length > 0 ? pathParameters : null,
    body: body === undefined ? null : isText ? body.toString('utf8') : body.toString('base64'),
    isBase64Encoded: !isText,
    user: (req.headers['x-txs-user'] as string | undefined) || defaultUser,
    sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
    userAgent: req.headers['user-agent'] ?? null,
  });
}

function sendJson(
  res: ServerResponse,
  statusCode: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(statusCode, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

async function ensureTable(endpoint: string): Promise<void> {
  // The same region and credentials the container's store uses (functions/shared/container.ts): a DynamoDB
  // that keeps tables per region (moto, DynamoDB Local) must see the table where the store looks for it.
  const client = new DynamoDBClient({
    endpoint,
    region: process.env.AWS_REGION ?? 'local',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  try {
    await client.send(new DescribeTableCommand({ TableName: LOCAL_TABLE_NAME }));
  } catch (error) {
    if (!(error instanceof ResourceNotFoundException)) throw error;
    await client.send(new CreateTableCommand(createTableInput(LOCAL_TABLE_NAME)));
  } finally {
    client.destroy();
  }
}

/** The embedded dynalite: persisted under `dataDir`, or in memory. */
async function startDynalite(
  dataDir: string,
  inMemory: boolean,
): Promise<{ endpoint: string; close(): Promise<void> }> {
  const db = inMemory
    ? dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 })
    : dynalite({ path: join(dataDir, 'dynamodb'), createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((ok) => db.listen(0, '127.0.0.1', ok));
  return {
    endpoint: `http://127.0.0.1:${(db.address() as AddressInfo).port}`,
    close: () => new Promise<void>((ok) => db.close(() => ok())),
  };
}

/**
 * Starts the local API.
 *
 * @example
 * ```ts
 * const server = await startLocalServer({ port: 0, inMemory: true });
 * await fetch(`${server.url}/v1/schedulers`);
 * await server.close();
 * ```
 */
export async function startLocalServer(options: LocalServerOptions = {}): Promise<LocalServer> {
  const dataDir = resolve(options.dataDir ?? process.env.TXS_DATA_DIR ?? '.txs-data');
  mkdirSync(dataDir, { recursive: true });
  const db = options.dynamodbEndpoint ? undefined : await startDynalite(dataDir, options.inMemory ?? false);
  const dbEndpoint = options.dynamodbEndpoint ?? db?.endpoint ?? '';
  await ensureTable(dbEndpoint);

  process.env[ENV.tableName] = LOCAL_TABLE_NAME;
  process.env[ENV.dynamoDbEndpoint] = dbEndpoint;
  process.env[ENV.schedulers] = (options.schedulers ?? LOCAL_SCHEDULERS).join(',');
  process.env[ENV.localDataDir] = join(dataDir, 'local_cwd');
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

  const log = (line: string) => {
    if (options.verbose) console.log(line);
  };
  const root = resolve(new URL('../..', import.meta.url).pathname);
  const stateChange = (await import(pathToFileURL(join(root, 'functions/events/state-change.ts')).href)) as {
    handleStateChange: (event: unknown) => Promise<{ applied: boolean; reason: string }>;
  };
  const reconciler = (await import(pathToFileURL(join(root, 'functions/reconciler/handler.ts')).href)) as {
    reconcileAll: () => Promise<unknown>;
  };

  // The in-process event bus: local scheduler events are delivered one at a time, in order, like a queue.
  let bus: Promise<unknown> = Promise.resolve();
  const pending = new Set<Promise<unknown>>();
  configureLocalMode({
    emitEvent: (event) => {
      const delivery = bus
        .then(() => stateChange.handleStateChange(event))
        .then(() => undefined)
        .catch((error: unknown) => console.error('local state-change delivery failed:', error));
      bus = delivery;
      pending.add(delivery);
      void delivery.finally(() => pending.delete(delivery));
      return delivery;
    },
    publisher: {
      publish: async (event: AppStateChangeEvent) => {
        log(
          `${event.time}  ${event.handle}  ${event.from} -> ${event.to}${event.reason ? `  (${event.reason})` : ''}`,
        );
      },
    },
  });

  const routes = ROUTES.map(compile);
  const handlers = new Map<string, ProxyHandler>();
  const handlerFor = async (route: RouteDefinition): Promise<ProxyHandler> => {
    let handler = handlers.get(route.name);
    if (!handler) {
      handler = ((await import(pathToFileURL(join(root, route.entry)).href)) as { handler: ProxyHandler })
        .handler;
      handlers.set(route.name, handler);
    }
    return handler;
  };
  const defaultUser = userInfo().username;

  const server: Server = createServer(async (req, res) => {
    try {
      const url = new URL(req.url ?? '/', 'http://localhost');
      const candidates = routes
        .map((r) => ({ r, match: r.pattern.exec(url.pathname) }))
        .filter((c): c is { r: CompiledRoute; match: RegExpExecArray } => c.match !== null);
      if (candidates.length === 0) {
        sendJson(res, 404, {
          error: {
            code: 'RouteNotFound',
            message: `No route ${req.method} ${url.pathname}; see docs/http-api.md`,
          },
        });
        return;
      }
      const chosen = candidates.find((c) => c.r.route.method === req.method);
      if (!chosen) {
        const allowed = candidates.map((c) => c.r.route.method).join(', ');
        sendJson(
          res,
          405,
          {
            error: {
              code: 'MethodNotAllowed',
              message: `${req.method} is not allowed on ${url.pathname}; use ${allowed}`,
            },
          },
          { allow: allowed },
        );
        return;
      }
      const body = await readBody(req, 2 * 1024 * 1024);
      const event = toEvent(req, url, chosen.r, chosen.match, body, defaultUser);
      const handler = await handlerFor(chosen.r.route);
      const result = await handler(event, lambdaContext(`txs-local-${chosen.r.route.name}`));
      log(`${req.method} ${url.pathname}${url.search} -> ${result.statusCode}`);
      res.writeHead(result.statusCode, (result.headers ?? {}) as Record<string, string>);
      res.end(result.body);
    } catch (error) {
      console.error('local server error:', error);
      if (!res.headersSent)
        sendJson(res, 500, { error: { code: 'InternalError', message: 'local server error' } });
      else res.end();
    }
  });
  const port = options.port ?? Number(process.env.PORT ?? 8080);
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(port, options.host ?? '127.0.0.1', ok);
  });
  const address = server.address() as AddressInfo;
  const reconcileEveryMs = options.reconcileEveryMs ?? 60_000;
  const timer =
    reconcileEveryMs > 0
      ? setInterval(() => {
          reconciler.reconcileAll().catch((error: unknown) => console.error('reconcile failed:', error));
        }, reconcileEveryMs)
      : undefined;
  timer?.unref();

  return {
    url: `http://${address.address}:${address.port}`,
    port: address.port,
    dataDir,
    async close() {
      if (timer) clearInterval(timer);
      await new Promise<void>((ok) => server.close(() => ok()));
      server.closeAllConnections();
      await closeRunner();
      await Promise.allSettled([...pending]);
      await db?.close();
    },
  };
}
