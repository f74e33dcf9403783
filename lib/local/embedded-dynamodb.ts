/**
 * The local server's DynamoDB: dynalite in this process, reached without a socket. The store's client still
 * builds, signs and parses real DynamoDB API requests; {@link inProcessTransport} hands each one to dynalite's
 * HTTP request handler directly instead of over loopback TCP. Nothing listens on a port, so no other process
 * (and no other user of the machine) can read or write the records, and every write passes through one
 * place that reports it ({@link WriteObserver}), which is what keeps the server's record cache coherent.
 *
 * @module
 */
import { EventEmitter } from 'node:events';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import dynalite from 'dynalite';
import type { Transport, WireResponse } from '../store/index.js';
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

/**
 * A transport for the store's DynamoDB client that serves each request with dynalite's request handler in
 * this process, as dynalite would answer it over HTTP, without a socket.
 *
 * @example
 * ```ts
 * const db = startEmbeddedDynamoDb({ inMemory: true });
 * const client = new ItemClient({ endpoint: db.endpoint, transport: db.transport, region: 'local',
 *   credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
 * ```
 */
export function inProcessTransport(
  server: Server,
  observe: WriteObserver | undefined,
  guard?: LevelGuard,
): Transport {
  return async (request) => {
    const { body } = request;
    const headers: Record<string, string> = { 'content-length': String(Buffer.byteLength(body)) };
    for (const [name, value] of Object.entries(request.headers)) headers[name.toLowerCase()] = value;
    const operation = (headers['x-amz-target'] ?? '').split('.').pop() ?? '';
    const write = !READS.has(operation);
    await guard?.admit(write);
    const observed = write ? observe?.({ operation, key: writtenKey(operation, body) }) : undefined;
    const settled = () => {
      observed?.();
      guard?.done();
    };
    return new Promise<WireResponse>((resolve, reject) => {
      const req = Object.assign(new EventEmitter(), { method: 'POST', url: '/', headers });
      const responseHeaders: Record<string, string> = {};
      const res = {
        statusCode: 200,
        setHeader(name: string, value: unknown) {
          responseHeaders[name.toLowerCase()] = String(value);
        },
        end(chunk?: string | Buffer) {
          settled();
          const text = chunk === undefined ? '' : chunk.toString();
          const failure = guard?.failureOf(res.statusCode, text);
          if (failure) {
            reject(failure);
            return;
          }
          resolve({
            statusCode: res.statusCode,
            headers: responseHeaders,
            body: text,
          });
        },
      };
      try {
        server.emit('request', req as unknown as IncomingMessage, res as unknown as ServerResponse);
        if (body !== '') req.emit('data', Buffer.from(body, 'utf8'));
        req.emit('end');
      } catch (error) {
        settled();
        reject(error);
      }
    });
  };
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
  /** The endpoint to give the store's client; only a name: requests go through {@link EmbeddedDynamoDb.transport}. */
  endpoint: string;
  /** The transport that reaches dynalite in process. */
  transport: Transport;
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
    transport: inProcessTransport(server, options.observeWrites, guard),
    close() {
      closing ??= new Promise<void>((resolve, reject) =>
        opened.db.close((error) => (error ? reject(error) : resolve())),
      );
      return closing;
    },
  };
}
