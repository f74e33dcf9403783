/**
 * Clients and the record store, built from the function's configuration on first use, once per cold start.
 * The store's DynamoDB client is created here, the schedulers' SDK clients by their modules
 * (functions/schedulers/), each registered through {@link created}; nothing else builds one. The Planner and
 * the Runner are built over the scheduler table (functions/schedulers/table.ts). No Runner publishes events:
 * the publisher function puts committed changes from the table's stream on the bus; local mode wraps the
 * store in the local outbox, and passes its configuration and hooks with {@link configureLocalMode}.
 */
import type { BatchClient } from '@aws-sdk/client-batch';
import type { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SageMakerClient } from '@aws-sdk/client-sagemaker';
import type { HttpHandler } from '@smithy/protocol-http';
import type { localStateChangeEvent } from '../../lib/events/index.js';
import { type OutboxStore, withLocalOutbox } from '../../lib/events/local-outbox.js';
import {
  type AppRecordStore,
  AppRecords,
  type AppStateChangePublisher,
  type RecordChanges,
} from '../../lib/runner/index.js';
import { type HostAccessPolicy, type JobWorkspace, UnknownSchedulerError } from '../../lib/specs/index.js';
import { DynamoAppRecordStore, newDynamoDbClient } from '../../lib/store/index.js';
import { type FunctionConfig, type LocalSettings, readFunctionConfig } from './config.js';
import { forgetDeploymentConfig } from './deployment-config.js';
import { traceSdkCalls } from './tracing.js';

/** Hooks local mode sets before the first request. */
export interface LocalModeHooks {
  /** The settings the local server fixes (its table, embedded DynamoDB, schedulers, data directory). */
  settings?: LocalSettings;
  /**
   * Host access jobs get where the environment configures none (local mode: the user's own machine, all;
   * docs/security.md). None by default.
   */
  defaultHostAccess?: HostAccessPolicy;
  /** Receives local scheduler events as EventBridge events (the in-process bus). */
  emitEvent?: (event: ReturnType<typeof localStateChangeEvent>) => Promise<void>;
  /**
   * Where committed state changes are published (dynalite has no stream: the local outbox publishes each
   * change after its write commits, retrying). The deployed stack publishes from the table's stream.
   */
  publisher?: AppStateChangePublisher;
  /**
   * The `requestHandler` of the record store's SDK DynamoDB client (local mode: dynalite in process; tests:
   * a handler that injects faults).
   */
  dynamoDbRequestHandler?: HttpHandler;
  /**
   * Wraps the store the Runners use (local mode: its read-through record cache); `records` is the DynamoDB
   * store under it.
   */
  wrapRecordStore?: (store: AppRecordStore, records: DynamoAppRecordStore) => AppRecordStore;
  /**
   * Tells of committed record writes, so a status request with `waitFor` is held until its record changes
   * (local mode's record watch; `wrapRecordStore` must route the writes through it). Without it (the deployed
   * stack) such a request is answered at once.
   */
  recordChanges?: RecordChanges;
  /**
   * The server's workspace archives (local mode): `resolve` gives the stored archive `sha256` as a run's
   * workspace (local_cwd unpacks it as the app starts) or throws a ValidationError naming
   * `workspace.sha256`. Without it (the deployed stack) a run request with a workspace is refused.
   */
  workspaces?: {
    resolve(sha256: string): JobWorkspace;
    /** Whether the archive `sha256` is stored (`POST /v1/workspaces`); marks it used when it is. */
    holds(sha256: string): Promise<boolean>;
    /** A dry run's workspace: where a run would find the archive `sha256`, and whether it is stored yet. */
    describe(sha256: string): JobWorkspace & { stored: boolean };
  };
}

/** Any AWS SDK client the container creates. */
export type SdkClient = DynamoDBClient | BatchClient | SageMakerClient | CloudWatchLogsClient;

/** Called with every SDK client the container creates, before its first use. */
export type ClientHook = (client: SdkClient) => void;

let hooks: LocalModeHooks = {};
let clientHook: ClientHook | undefined;
let builtConfig: FunctionConfig | undefined;
let builtStore: DynamoAppRecordStore | undefined;
let builtRunnerStore: AppRecordStore | undefined;
let builtRecords: AppRecords | undefined;
const forgetListeners: (() => void)[] = [];

/**
 * Forgets the configuration, the clients, the store and everything built on them (the Planner and the
 * Runner too, through {@link onForget}): the next call builds them again.
 */
export function forgetAll(): void {
  forgetDeploymentConfig(hooks.defaultHostAccess);
  builtConfig = undefined;
  builtStore = undefined;
  builtRunnerStore = undefined;
  builtRecords = undefined;
  for (const listener of forgetListeners) listener();
}

/** Calls `listener` whenever the container forgets what it built (the scheduler table forgets its Planner and Runner). */
export function onForget(listener: () => void): void {
  forgetListeners.push(listener);
}

/** Local mode: set the in-process bus and publisher. Must run before the first Runner is built. */
export function configureLocalMode(localHooks: LocalModeHooks): void {
  hooks = localHooks;
  forgetAll();
}

/** The hooks local mode set (none outside local mode). */
export function localModeHooks(): LocalModeHooks {
  return hooks;
}

/**
 * Tests and benchmarks: `hook` sees every SDK client created from now on (to add middleware that counts calls
 * or injects faults). Forgets the clients and Runners built so far.
 */
export function configureClients(hook: ClientHook | undefined): void {
  clientHook = hook;
  forgetAll();
}

/**
 * Registers an SDK client the container (or a backend module it loaded) created, before its first use: its
 * calls are recorded as X-Ray subsegments (tracing.ts).
 */
export function created<T extends object>(client: T): T {
  traceSdkCalls(client as T & SdkClient);
  clientHook?.(client as SdkClient);
  return client;
}

/**
 * The function's configuration, read from the environment (and local mode's settings) and validated on first
 * use (once per cold start).
 *
 * @throws ConfigError naming every bad variable (the function cannot work; nothing falls back silently).
 */
export function config(): FunctionConfig {
  builtConfig ??= readFunctionConfig(process.env, hooks.settings);
  return builtConfig;
}

/** The default session name for new handles. */
export function sessionName(): string {
  return config().sessionName;
}

/**
 * The SDK DynamoDB client for a DynamoDB at `endpoint` (local mode's dynalite, moto, DynamoDB Local): the
 * environment's region (else `local`), placeholder credentials, and `requestHandler` when given.
 */
export function endpointDynamoDbClient(endpoint: string, requestHandler?: HttpHandler): DynamoDBClient {
  return newDynamoDbClient({
    endpoint,
    region: process.env.AWS_REGION ?? 'local',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    ...(requestHandler ? { requestHandler } : {}),
  });
}

/** The app record store (DynamoDB), built on first use. */
export function store(): DynamoAppRecordStore {
  if (builtStore) return builtStore;
  const { dynamoDbEndpoint: endpoint, tableName, retentionDays } = config();
  const client = created(
    endpoint ? endpointDynamoDbClient(endpoint, hooks.dynamoDbRequestHandler) : newDynamoDbClient(),
  );
  builtStore = new DynamoAppRecordStore({ client, tableName, retentionDays });
  return builtStore;
}

/**
 * The store the Runners write through: the DynamoDB store, wrapped in the local outbox when local mode set
 * a publisher (in AWS, the table's stream feeds the publisher function instead), then in what local mode's
 * `wrapRecordStore` adds (its record cache).
 */
export function runnerStore(): AppRecordStore {
  if (builtRunnerStore) return builtRunnerStore;
  const publisher = hooks.publisher;
  const published = publisher
    ? withLocalOutbox(store(), {
        publisher,
        onGiveUp: (error) => console.error('local AppState Change event not published:', error),
      })
    : store();
  builtRunnerStore = hooks.wrapRecordStore?.(published, store()) ?? published;
  return builtRunnerStore;
}

/** The local outbox the Runners write through, once built (local mode with a publisher); else undefined. */
export function builtOutbox(): Partial<OutboxStore> | undefined {
  return builtRunnerStore as Partial<OutboxStore> | undefined;
}

/**
 * The app records over the store alone (list, status without refresh, the state-change function): `get`,
 * `list`, `applyNativeTransition`. Use the scheduler table's `runner()` for anything that asks a scheduler.
 */
export function appRecords(): AppRecords {
  builtRecords ??= new AppRecords({ store: runnerStore(), sessionName: sessionName() });
  return builtRecords;
}

/**
 * Checks that `scheduler` is enabled (`TXS_SCHEDULERS`), without building any scheduler.
 *
 * @throws UnknownSchedulerError when `scheduler` is given and not enabled.
 */
export function requireSchedulerName(scheduler: string): void {
  const names = config().schedulers;
  if (!names.includes(scheduler)) throw new UnknownSchedulerError(scheduler, [...names]);
}
