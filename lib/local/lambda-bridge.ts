/**
 * The local server's HTTP ↔ Lambda bridge: finds the route of a request in the deployed route table
 * (`functions/routes.ts`), turns the request into the API Gateway proxy event that route's function would
 * receive, invokes the function's handler (imported on first use) and writes its result back as the HTTP
 * answer. An unknown path is a 404 `RouteNotFound`, a known path with another method a 405 with `Allow`.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { ROUTES, type RouteDefinition } from '../../functions/routes.js';
import { errorResponse, HttpRequestError } from '../../functions/shared/http-errors.js';
import { lambdaContext, proxyEvent } from './lambda-events.js';

/** The largest request body read; the handlers refuse bodies far smaller than this. */
const MAX_BODY_BYTES = 2 * 1024 * 1024;

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
  path: string,
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
    path,
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

/** Writes a JSON answer. */
export function sendJson(
  res: ServerResponse,
  statusCode: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(statusCode, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/**
 * Answers `error` as the API's functions do: its status, `retryable` and `Retry-After` from the one map
 * (`functions/shared/http-errors.ts`), with a request id; anything that is not a known error is a 500.
 */
export function sendError(res: ServerResponse, error: unknown, headers: Record<string, string> = {}): void {
  const answer = errorResponse(error, randomUUID());
  res.writeHead(answer.statusCode, { ...answer.headers, ...headers });
  res.end(answer.body);
}

/** Answers an admitted API request (`path` as sent, without its query) through its route's function. */
export type LambdaBridge = (req: IncomingMessage, res: ServerResponse, path: string) => Promise<void>;

/**
 * The bridge to the handlers of the repository at `root`.
 *
 * @param defaultUser the caller a request is attributed to when it names none (`X-Txs-User`).
 * @param log receives one line per request a handler answered.
 *
 * @example
 * ```ts
 * const bridge = lambdaBridge(root, userInfo().username, console.log);
 * await bridge(req, res, '/v1/schedulers');
 * ```
 */
export function lambdaBridge(root: string, defaultUser: string, log: (line: string) => void): LambdaBridge {
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
  return async (req, res, path) => {
    const candidates = routes
      .map((r) => ({ r, match: r.pattern.exec(path) }))
      .filter((c): c is { r: CompiledRoute; match: RegExpExecArray } => c.match !== null);
    if (candidates.length === 0) {
      sendError(
        res,
        new HttpRequestError('RouteNotFound', `No route ${req.method} ${path}; see docs/http-api.md`),
      );
      return;
    }
    const chosen = candidates.find((c) => c.r.route.method === req.method);
    if (!chosen) {
      const allowed = candidates.map((c) => c.r.route.method).join(', ');
      sendError(
        res,
        new HttpRequestError('MethodNotAllowed', `${req.method} is not allowed on ${path}; use ${allowed}`),
        { allow: allowed },
      );
      return;
    }
    const url = new URL(req.url ?? '/', 'http://localhost');
    const body = await readBody(req, MAX_BODY_BYTES);
    const event = toEvent(req, url, path, chosen.r, chosen.match, body, defaultUser);
    const handler = await handlerFor(chosen.r.route);
    const result = await handler(event, lambdaContext(`txs-local-${chosen.r.route.name}`));
    log(`${req.method} ${path}${url.search} -> ${result.statusCode}`);
    res.writeHead(result.statusCode, (result.headers ?? {}) as Record<string, string>);
    res.end(result.body);
  };
}
