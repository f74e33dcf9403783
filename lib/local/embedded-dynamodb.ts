/**
 * The local server's DynamoDB: dynalite in this process, reached without a socket. The AWS SDK's DynamoDB
 * client still builds, signs and parses real DynamoDB API requests; {@link InProcessRequestHandler}, plugged in
 * as the client's `requestHandler`, hands each one to dynalite's HTTP request handler directly instead of over
 * loopback TCP. Nothing listens on a port, so no other process
 * (and no other user of the machine) can read or write the records, and every write passes through one
 * place that reports it ({@link WriteObserver}), which is what keeps the server's record cache coherent.
 *
 * @module
 */
import { EventEmitter } from 'node:events';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { type HttpHandler, type HttpRequest, HttpResponse } from '@smithy/protocol-http';
import dynalite from 'dynalite';
import { type GuardedLevel, LevelGuard } from './level-guard.js';

/** An attribute map as the DynamoDB wire carries it (`{ pk: { S: 'APP#…' } }`). */
export type WireAttributes = Record<string, Record<string, unknown>>;

/** A request that may change the table, as it reaches dynalite. */
export interface DynamoDbWrite {
  /** The operation (`PutItem`, `UpdateItem`, `DeleteItem`, `BatchWriteItem`, `CreateTable`, …). */
  operation: string;
  /** The key (or whole item, for `PutItem`) of a single-item write; undefined when it may touch any item. */
  key: WireAttributes | undefined;
}

/**
 * Told of every write before dynalite sees it; returns what to call once dynalite has answered it (committed
 * or refused: a failed conditional write is reported too).
 */
export type WriteObserver = (write: DynamoDbWrite) => () => void;

/** Operations that never change an item; every other operation counts as a write. */
const READS = new Set([
  'GetItem',
  'BatchGetItem',
  'Query',
  'Scan',
  'DescribeTable',
  'DescribeTimeToLive',
  'ListTables',
  'ListTagsOfResource',
]);

/** The key of a single-item write, read from its request body; undefined when it is not one or unreadable. */
function writtenKey(operation: string, body: string): WireAttributes | undefined {
  if (operation !== 'PutItem' && operation !== 'UpdateItem' && operation !== 'DeleteItem') return undefined;
  try {
    const input = JSON.parse(body) as { Key?: unknown; Item?: unknown };
    const key = operation === 'PutItem' ? input.Item : input.Key;
    return typeof key === 'object' && key !== null ? (key as WireAttributes) : undefined;
  } catch {
    return undefined;
  }
}

/** The UTF-8 text of a request body as the SDK serialized it (a string or bytes for DynamoDB's JSON protocol). */
export function bodyText(body: unknown): string {
  if (body === undefined || body === null) return '';
  if (typeof body === 'string') return body;
  if (body instanceof Uint8Array)
    return Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString();
  throw new TypeError('the in-process DynamoDB handler takes a string or byte body, not a stream');
}

/**
 * The AWS SDK `requestHandler` of a `DynamoDBClient` that serves each request with dynalite's request
 * handler in this process, as dynalite would answer it over HTTP, without a socket. An error dynalite throws
 * while handling a request reaches the caller.
 *
 * @example
 * ```ts
 * const db = startEmbeddedDynamoDb({ inMemory: true });
 * const client = new DynamoDBClient({ endpoint: db.endpoint, requestHandler: db.requestHandler,
 *   region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
 * ```
 */
export class InProcessRequestHandler implements HttpHandler {
  constructor(
    private readonly server: Server,
    private readonly observe: WriteObserver | undefined,
    private readonly guard?: LevelGuard,
  ) {}

  /**
   * Sends `request` to dynalite and resolves with its answer; rejects with the guard's error for a write the
   * database could not make (a full disk: see lib/local/level-guard.ts).
   */
  async handle(request: HttpRequest): Promise<{ response: HttpResponse }> {
    const body = bodyText(request.body);
    const headers: Record<string, string> = { 'content-length': String(Buffer.byteLength(body)) };
    for (const [name, value] of Object.entries(request.headers)) headers[name.toLowerCase()] = value;
    const operation = (headers['x-amz-target'] ?? '').split('.').pop() ?? '';
    const write = !READS.has(operation);
    const { guard } = this;
    await guard?.admit(write);
    const observed = write ? this.observe?.({ operation, key: writtenKey(operation, body) }) : undefined;
    const settled = () => {
      observed?.();
      guard?.done();
    };
    return new Promise((resolve, reject) => {
      const req = Object.assign(new EventEmitter(), { method: 'POST', url: '/', headers });
      const responseHeaders: Record<string, string> = {};
      const res = {
        statusCode: 200,
        setHeader(name: string, value: unknown) {
          responseHeaders[name.toLowerCase()] = String(value);
        },
        end(chunk?: string | Buffer) {
          settled();
          const answer = chunk === undefined ? Buffer.alloc(0) : Buffer.from(chunk);
          const failure = guard?.failureOf(res.statusCode, answer.toString());
          if (failure) {
            reject(failure);
            return;
          }
          resolve({
            response: new HttpResponse({
              statusCode: res.statusCode,
              headers: responseHeaders,
              body: answer,
            }),
          });
        },
      };
      try {
        this.server.emit('request', req as unknown as IncomingMessage, res as unknown as ServerResponse);
        if (body !== '') req.emit('data', Buffer.from(body, 'utf8'));
        req.emit('end');
      } catch (error) {
        settled();
        reject(error);
      }
    });
  }

  /** Nothing to configure: there is no connection. */
  updateHttpClientConfig(): void {}

  /** Nothing to configure: there is no connection. */
  httpHandlerConfigs(): Record<string, never> {
    return {};
  }
}

/** Options of {@link startEmbeddedDynamoDb}. */
export interface EmbeddedDynamoDbOptions {
  /** Where dynalite keeps its LevelDB files (`<dataDir>/dynamodb`); ignored with `inMemory`. */
  dataDir?: string;
  /** Keep everything in memory (nothing persisted). */
  inMemory?: boolean;
  /** Told of every write (see {@link WriteObserver}). */
  observeWrites?: WriteObserver;
}

/** A running embedded DynamoDB. */
export interface EmbeddedDynamoDb {
  /**
   * The endpoint to give the SDK client; only a name: requests go through
   * {@link EmbeddedDynamoDb.requestHandler}.
   */
  endpoint: string;
  /** The SDK client's `requestHandler` that reaches dynalite in process. */
  requestHandler: InProcessRequestHandler;
  /** Waits for dynalite's pending operations and closes its database. */
  close(): Promise<void>;
}

/** The part of dynalite's internal store {@link startEmbeddedDynamoDb} uses. */
interface DynaliteStore {
  db: GuardedLevel & { close(callback: (error?: Error | null) => void): void };
}

/**
 * Starts dynalite without listening: its HTTP server object only holds the request handler. dynalite closes
 * its database from `server.close()`, which refuses a server that never listened, so the store dynalite
 * creates is taken as it is created and closed directly (dynalite's `db.create` is looked up at call time).
 */
export function startEmbeddedDynamoDb(options: EmbeddedDynamoDbOptions): EmbeddedDynamoDb {
  const dynaliteDb = createRequire(import.meta.url)('dynalite/db') as {
    create: (settings: unknown) => DynaliteStore;
  };
  const create = dynaliteDb.create;
  let store: DynaliteStore | undefined;
  dynaliteDb.create = (settings) => {
    store = create(settings);
    return store;
  };
  let server: Server;
  try {
    const timings = { createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 };
    server = options.inMemory
      ? dynalite(timings)
      : dynalite({ ...timings, path: join(options.dataDir ?? '.', 'dynamodb') });
  } finally {
    dynaliteDb.create = create;
  }
  const opened = store;
  if (opened === undefined)
    throw new Error('dynalite did not create its store through dynalite/db: upgrade this module');
  const storePath = options.inMemory ? 'the in-memory store' : join(options.dataDir ?? '.', 'dynamodb');
  // abstract-level's own close: dynalite's replacement ends its store for good.
  const levelClose = Object.getPrototypeOf(opened.db).close as (this: unknown) => Promise<void>;
  const guard = new LevelGuard(opened.db, storePath, () => levelClose.call(opened.db));
  let closing: Promise<void> | undefined;
  return {
    endpoint: 'http://dynamodb.in-process',
    requestHandler: new InProcessRequestHandler(server, options.observeWrites, guard),
    close() {
      closing ??= new Promise<void>((resolve, reject) =>
        opened.db.close((error) => (error ? reject(error) : resolve())),
      );
      return closing;
    },
  };
}
