/**
 * The local API server (`npm start`): HTTP requests become API Gateway proxy events for the same handlers
 * the stack deploys; DynamoDB is dynalite in-process (persisted under the data directory, or in memory);
 * the local_cwd scheduler runs jobs as processes here, and its state changes travel as EventBridge-shaped
 * events through an in-process bus to the same state-change function. Never used in the deployed stack.
 *
 * @module
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { userInfo } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { closeRunner, recoverLocalApps, runner } from '../../functions/schedulers/table.js';
import { configureLocalMode, endpointDynamoDbClient, runnerStore } from '../../functions/shared/container.js';
import { socketBesideToken } from '../loopback/local-socket.js';
import { LOCAL_TOKEN_FILE_ENV, localTokenFile } from '../loopback/local-token.js';
import { OneTimeLink } from '../loopback/one-time-link.js';
import { PeerUser } from '../loopback/peer-user.js';
import type { AppStateChangeEvent } from '../runner/index.js';
import { LocalAccess, type ProcNetReader } from './access.js';
import { admittingHandler, type Gate } from './admission.js';
import { batchedLines } from './console-lines.js';
import { startEmbeddedDynamoDb } from './embedded-dynamodb.js';
import { LocalEventBus } from './event-bus.js';
import { FOLLOWED_SCHEDULERS } from './follower.js';
import { lambdaBridge } from './lambda-bridge.js';
import { listenOnOwnSocket } from './own-socket.js';
import { lockDataDir, preparePrivateDir, removeTokenFile, writeTokenFile } from './private-files.js';
import { RecordCache } from './record-cache.js';
import { ensureRecordTable } from './record-table.js';
import { RecordWatch } from './record-watch.js';
import { startTimers } from './timers.js';
import { archivesInUse, DEFAULT_WORKSPACE_RETENTION_DAYS, WorkspaceArchives } from './workspace-archives.js';

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
   * How often non-terminal apps on AWS-backed schedulers (aws_batch, aws_sagemaker) are described (ms); 0
   * disables it. Default 2 s. Local mode has no EventBridge: this is how their apps follow their jobs.
   */
  followEveryMs?: number;
  /**
   * Use the DynamoDB at this endpoint (e.g. moto's, for `npm run test:moto`) instead of the embedded dynalite;
   * the table is created there from `lib/store/table.ts` unless it exists. Region and credentials come from
   * the environment (`AWS_REGION`); `dataDir` and `inMemory` then concern local job logs only.
   */
  dynamodbEndpoint?: string;
  /** Where the access token is written; default `$TXS_LOCAL_TOKEN_FILE` or `~/.txs/local/<port>.token`. */
  tokenFile?: string;
  /** Reads `/proc/net/tcp{,6}` to find a client's OS user; injectable for tests. */
  readProcNet?: ProcNetReader;
  /**
   * Days a workspace archive is kept after its last use (a `HEAD`, an upload or a run naming it); default `$TXS_WORKSPACE_RETENTION_DAYS`,
   * else 30 (docs/workspaces.md).
   */
  workspaceRetentionDays?: number;
}

/** A running local server. */
export interface LocalServer {
  url: string;
  port: number;
  dataDir: string;
  /** The file holding the access token (0600), removed by {@link LocalServer.close}. */
  tokenFile: string;
  /** The token a client sends as `Authorization: Bearer <token>`. */
  token: string;
  /**
   * The server's own Unix socket beside the token file (`<port>.sock`), through which its OS user's clients
   * are admitted without a token; removed by {@link LocalServer.close}. Undefined when it has none.
   */
  socketFile: string | undefined;
  /** Why the server has no own socket (when {@link LocalServer.socketFile} is undefined). */
  socketSkipped: string | undefined;
  /**
   * A new one-time link to the dashboard (`<url>/?token=…`) that a browser exchanges for a session cookie:
   * how a browser gets in where its OS user cannot be read from `/proc/net/tcp`. Only the newest link works,
   * once.
   */
  newDashboardLink(): string;
  close(): Promise<void>;
}

/** Servers open in this process, and the umask the process had before the first one tightened it. */
let openServers = 0;
let replicaUmask = 0o022;

/** The table name local mode uses. */
export const LOCAL_TABLE_NAME = 'txs-apps';

/** Schedulers local mode enables by default: local_cwd runs jobs; the others answer dry runs offline. */
export const LOCAL_SCHEDULERS: readonly string[] = [
  'local_cwd',
  'aws_batch',
  'aws_sagemaker',
  'slurm',
  'local_docker',
  'lsf',
  'kubernetes',
  'kubernetes_mcad',
];

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
  preparePrivateDir(dataDir);
  const lock = lockDataDir(dataDir);
  // Files the server creates (dynalite's, logs, records) are 0600; replicas get the user's own umask back.
  if (openServers === 0) replicaUmask = process.umask(0o077);
  openServers++;
  const undo: Array<() => void | Promise<void>> = [
    () => {
      openServers--;
      if (openServers === 0) process.umask(replicaUmask);
    },
    () => lock.release(),
  ];
  try {
    return await serve(options, dataDir, undo);
  } catch (error) {
    await unwind(undo);
    throw error;
  }
}

/** Runs the clean-up steps newest first (each once), continuing past failures; rethrows the first one. */
async function unwind(undo: Array<() => void | Promise<void>>): Promise<void> {
  let failure: unknown;
  for (let step = undo.pop(); step !== undefined; step = undo.pop()) {
    try {
      await step();
    } catch (error) {
      failure ??= error;
    }
  }
  if (failure !== undefined) throw failure;
}

async function serve(
  options: LocalServerOptions,
  dataDir: string,
  undo: Array<() => void | Promise<void>>,
): Promise<LocalServer> {
  // The embedded dynalite has one writer, this server, whose every write it reports: records can be cached.
  const cache = options.dynamodbEndpoint ? undefined : new RecordCache();
  const db = cache
    ? startEmbeddedDynamoDb({
        dataDir,
        inMemory: options.inMemory ?? false,
        observeWrites: cache.observeWrite,
      })
    : undefined;
  if (db !== undefined) undo.push(() => db.close());
  const dbEndpoint = options.dynamodbEndpoint ?? db?.endpoint ?? '';
  await ensureRecordTable(LOCAL_TABLE_NAME, endpointDynamoDbClient(dbEndpoint, db?.requestHandler));

  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

  const log = options.verbose ? batchedLines(process.stdout) : Object.assign(() => {}, { flush() {} });
  undo.push(() => log.flush());
  const root = resolve(new URL('../..', import.meta.url).pathname);
  const stateChange = (await import(
    pathToFileURL(join(root, 'functions/events/apply-state-change.ts')).href
  )) as {
    handleStateChange: (event: unknown) => Promise<{ applied: boolean; reason: string }>;
  };
  const reconciler = (await import(
    pathToFileURL(join(root, 'functions/reconciler/reconcile-all.ts')).href
  )) as {
    reconcileAll: () => Promise<unknown>;
  };

  // The in-process event bus: local scheduler events are delivered in order, retried while the disk is full.
  const bus = new LocalEventBus((event: unknown) => stateChange.handleStateChange(event));
  // Every committed record write wakes the status requests waiting for that record (`?waitFor=`).
  const watch = new RecordWatch();
  const workspaces = new WorkspaceArchives(
    dataDir,
    options.workspaceRetentionDays ??
      Number(process.env.TXS_WORKSPACE_RETENTION_DAYS || DEFAULT_WORKSPACE_RETENTION_DAYS),
  );
  const enabled = options.schedulers ?? LOCAL_SCHEDULERS;
  configureLocalMode({
    settings: {
      tableName: LOCAL_TABLE_NAME,
      dynamoDbEndpoint: dbEndpoint,
      schedulers: enabled,
      localDataDir: join(dataDir, 'local_cwd'),
      localReplicaUmask: replicaUmask,
    },
    // The user's own machine: host access stays allowed unless configured otherwise (docs/security.md).
    defaultHostAccess: { privileged: true, hostPathPrefixes: 'any', devices: 'any' },
    ...(db ? { dynamoDbRequestHandler: db.requestHandler } : {}),
    wrapRecordStore: (runnerStore, dynamo) =>
      watch.wrap(cache ? cache.wrap(runnerStore, (r) => dynamo.records.expiresAtOf(r)) : runnerStore),
    recordChanges: watch,
    workspaces,
    emitEvent: (event) => bus.emit(event),
    publisher: {
      publish: async (event: AppStateChangeEvent) => {
        log(
          `${event.time}  ${event.handle}  ${event.from} -> ${event.to}${event.reason ? `  (${event.reason})` : ''}`,
        );
      },
    },
  });

  const token = randomBytes(32).toString('base64url');
  // Set right after listening, before any connection can be handled.
  let gate!: Gate;
  const handle = admittingHandler(
    () => gate,
    lambdaBridge(root, userInfo().username, log),
    log,
    (req, res, path) => workspaces.serve(req, res, path),
  );
  const server: Server = createServer((req, res) => handle(req, res, false));
  // Recovery first: statuses are right from the first request, and replicas still running are adopted.
  undo.push(async () => {
    await closeRunner();
    await bus.idle();
    bus.close();
  });
  await recoverLocalApps();
  await bus.idle();
  // Unused workspace archives go once the records are recovered (never one a live app names).
  undo.push(
    workspaces.startSweeping(
      () => archivesInUse(runnerStore().queries, enabled),
      (error) => console.error('workspace sweep:', error),
    ),
  );

  const port = options.port ?? Number(process.env.PORT ?? 8080);
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(port, options.host ?? '127.0.0.1', ok);
  });
  undo.push(
    () =>
      new Promise<void>((ok) => {
        server.close(() => ok());
        server.closeAllConnections();
      }),
  );
  // Before the connections close: status requests waiting for a change answer with the record they have.
  undo.push(() => watch.close());
  const address = server.address() as AddressInfo;
  const overridden = process.env[LOCAL_TOKEN_FILE_ENV];
  const tokenFile = options.tokenFile ?? localTokenFile(address.port);
  writeTokenFile(tokenFile, token, options.tokenFile === undefined && (overridden ?? '') === '');
  undo.push(() => removeTokenFile(tokenFile, token));
  const uid = typeof process.getuid === 'function' ? process.getuid() : undefined;
  const origin = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
  const peer = new PeerUser(options.readProcNet ? { readProcNet: options.readProcNet } : {});
  const link = new OneTimeLink({
    port: address.port,
    refusedLinkMessage: 'this link was already used or is not this server’s: run txs ui for a new one',
    peer,
  });
  gate = { access: new LocalAccess({ port: address.port, token, tokenFile, peer, link }), link, origin };
  // After `gate` is set: the socket's first connection may come at once.
  const ownSocket = await listenOnOwnSocket(socketBesideToken(tokenFile, address.port), uid, (req, res) =>
    handle(req, res, true),
  );
  undo.push(() => ownSocket.close());
  const timers = startTimers({
    reconcileEveryMs: options.reconcileEveryMs ?? 60_000,
    reconcileAll: () => reconciler.reconcileAll(),
    followEveryMs: options.followEveryMs ?? 2_000,
    followed: FOLLOWED_SCHEDULERS.filter((name) => enabled.includes(name)),
    follow: async (scheduler) =>
      // No live app on this scheduler: nothing to describe, and its SDK module need not even load.
      (await runnerStore().queries.listActive(scheduler, 1)).records.length === 0
        ? { checked: 0, changed: 0, errors: 0 }
        : (await runner(scheduler)).reconcile(scheduler),
  });
  // First of all on close (undo runs newest first): no pass starts while the Runner closes.
  undo.push(() => timers.stop());

  let closing: Promise<void> | undefined;
  return {
    url: origin,
    port: address.port,
    dataDir,
    tokenFile,
    token,
    socketFile: ownSocket.file,
    socketSkipped: ownSocket.skipped,
    newDashboardLink: () => link.newLink(origin),
    close() {
      closing ??= unwind(undo);
      return closing;
    },
  };
}
