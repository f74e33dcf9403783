/**
 * Clients, record store, Planner and Runner, built from environment variables (names in env-names.ts) on first
 * use, once per cold start. SDK clients are created here and injected into the store and the schedulers;
 * nothing else builds one. Local mode configures an in-process event sink and an outbox publisher before the
 * first call.
 *
 * Each function pays only for what it uses:
 * - {@link recordsRunner}: the app records over the store alone (DynamoDB): list, status without refresh, the
 *   state-change function. A bundle that uses only this carries no scheduler, component or dry-run code.
 * - {@link planner}: dry runs and scheduler descriptions over each scheduler's translation only (no SDK
 *   client, no DynamoDB): the dry-run and scheduler-listing functions.
 * - {@link runner}: the full Runner. Each scheduler's module (and its SDK clients) is loaded by a dynamic
 *   `import()` when a request names it (`backends/index.ts`); the function bundles are built with esbuild
 *   code splitting, so each such module is a chunk that a cold start does not load until then.
 * - No Runner publishes events: the publisher function (functions/events/publisher.ts) puts committed
 *   changes from the table's stream on the bus; local mode wraps the store in the local outbox.
 */
import type { BatchClient } from '@aws-sdk/client-batch';
import type { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SageMakerClient } from '@aws-sdk/client-sagemaker';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { localStateChangeEvent } from '../../lib/events/index.js';
import { type OutboxStore, withLocalOutbox } from '../../lib/events/local-outbox.js';
import {
  type AppRecordStore,
  AppRecords,
  type AppStateChangePublisher,
  Planner,
  type PlannerOptions,
  Runner,
} from '../../lib/runner/index.js';
import { LOCAL_CWD, LocalCwdScheduler } from '../../lib/schedulers/local-cwd/index.js';
import { type SchedulerFactory, SchedulerRegistry } from '../../lib/schedulers/registry.js';
import { UnknownSchedulerError } from '../../lib/specs/index.js';
import { DynamoAppRecordStore } from '../../lib/store/index.js';
import type { BackendDeps } from './backends/deps.js';
import { BACKENDS, type BackendLoaders } from './backends/index.js';
import { type FunctionConfig, type KnownScheduler, readFunctionConfig } from './config.js';
import { deploymentConfig, forgetDeploymentConfig, HOST_ACCESS_SETTINGS } from './deployment-config.js';

export { DEFAULT_SCHEDULERS } from './config.js';

/** Hooks local mode sets before the first request. */
export interface LocalModeHooks {
  /** Receives local scheduler events as EventBridge events (the in-process bus). */
  emitEvent?: (event: ReturnType<typeof localStateChangeEvent>) => Promise<void>;
  /**
   * Where committed state changes are published (dynalite has no stream: the local outbox publishes each
   * change after its write commits, retrying). The deployed stack publishes from the table's stream.
   */
  publisher?: AppStateChangePublisher;
}

/** Any SDK client the container creates. */
export type SdkClient = DynamoDBClient | BatchClient | SageMakerClient | CloudWatchLogsClient;

/** Called with every SDK client the container creates, before its first use. */
export type ClientHook = (client: SdkClient) => void;

/** A registry of every enabled scheduler whose factories are loaded on demand (see {@link load}). */
interface LazyRegistry {
  readonly registry: SchedulerRegistry;
  /** The factories loaded so far, by scheduler name. */
  readonly factories: Map<string, SchedulerFactory>;
  /** Which of a scheduler's two forms this registry loads. */
  readonly form: keyof BackendLoaders;
}

let hooks: LocalModeHooks = {};
let localMode = false;
let clientHook: ClientHook | undefined;
let tracingHook: ClientHook | undefined;
let builtConfig: FunctionConfig | undefined;
let builtStore: DynamoAppRecordStore | undefined;
let builtRunnerStore: AppRecordStore | undefined;
let builtRecords: AppRecords | undefined;
let builtDeps: BackendDeps | undefined;
let builtRunner: { runner: Runner; schedulers: LazyRegistry } | undefined;
let builtPlanner: { planner: Planner; schedulers: LazyRegistry } | undefined;

function forget(): void {
  forgetDeploymentConfig();
  builtConfig = undefined;
  builtStore = undefined;
  builtRunnerStore = undefined;
  builtRecords = undefined;
  builtDeps = undefined;
  builtRunner = undefined;
  builtPlanner = undefined;
}

/** Local mode: set the in-process bus and publisher. Must run before the first Runner is built. */
export function configureLocalMode(localHooks: LocalModeHooks): void {
  hooks = localHooks;
  localMode = true;
  forget();
}

/**
 * Tests and benchmarks: `hook` sees every SDK client created from now on (to add middleware that counts calls
 * or injects faults). Forgets the clients and Runners built so far.
 */
export function configureClients(hook: ClientHook | undefined): void {
  clientHook = hook;
  forget();
}

/**
 * The functions that trace their SDK calls (functions/shared/tracing.ts, imported by the event and reconciler
 * handlers) instrument every client the container creates from now on.
 */
export function traceClients(hook: ClientHook): void {
  tracingHook = hook;
  forget();
}

function created<T extends object>(client: T): T {
  tracingHook?.(client as SdkClient);
  clientHook?.(client as SdkClient);
  return client;
}

/**
 * The function's configuration, read from the environment and validated on first use (once per cold start).
 *
 * @throws ConfigError naming every bad variable (the function cannot work; nothing falls back silently).
 */
export function config(): FunctionConfig {
  builtConfig ??= readFunctionConfig(process.env);
  return builtConfig;
}

/** The default session name for new handles. */
export function sessionName(): string {
  return config().sessionName;
}

/** The app record store (DynamoDB), built on first use. */
export function store(): DynamoAppRecordStore {
  if (builtStore) return builtStore;
  const { dynamoDbEndpoint: endpoint, tableName, retentionDays } = config();
  const dynamo = created(
    new DynamoDBClient(
      endpoint
        ? {
            endpoint,
            region: process.env.AWS_REGION ?? 'local',
            credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
          }
        : {},
    ),
  );
  const documentClient = DynamoDBDocumentClient.from(dynamo, {
    marshallOptions: { removeUndefinedValues: true },
  });
  builtStore = new DynamoAppRecordStore({ documentClient, tableName, retentionDays });
  return builtStore;
}

/**
 * The store the Runners write through: the DynamoDB store, wrapped in the local outbox when local mode set
 * a publisher (in AWS, the table's stream feeds the publisher function instead).
 */
function runnerStore(): AppRecordStore {
  if (builtRunnerStore) return builtRunnerStore;
  const publisher = hooks.publisher;
  builtRunnerStore = publisher
    ? withLocalOutbox(store(), {
        publisher,
        onGiveUp: (error) => console.error('local AppState Change event not published:', error),
      })
    : store();
  return builtRunnerStore;
}

/**
 * The app records over the store alone: `get`, `list`, `applyNativeTransition`. Use {@link runner} for
 * anything that asks a scheduler.
 */
export function recordsRunner(): AppRecords {
  builtRecords ??= new AppRecords({ store: runnerStore(), sessionName: sessionName() });
  return builtRecords;
}

/** What a backend module's factory is given: built once per cold start, shared by every scheduler. */
function backendDeps(): BackendDeps {
  if (builtDeps) return builtDeps;
  let logsClient: CloudWatchLogsClient | undefined;
  builtDeps = {
    created,
    logsClient: (make) => {
      logsClient ??= created(make());
      return logsClient;
    },
    config: config(),
    deployment: deploymentConfig(),
    emitLocalTransition: async (appId, transition) => {
      await hooks.emitEvent?.(localStateChangeEvent(appId, transition));
    },
  };
  return builtDeps;
}

/**
 * A registry listing every enabled scheduler (so an unknown name is refused with the full list), whose
 * factories exist once {@link load} has imported their modules.
 */
function lazyRegistry(form: keyof BackendLoaders): LazyRegistry {
  const factories = new Map<string, SchedulerFactory>();
  const entries: Record<string, SchedulerFactory> = {};
  for (const name of config().schedulers) {
    entries[name] = (ctx) => {
      const factory = factories.get(name);
      if (factory === undefined) throw new Error(`scheduler ${name} was used before its module was loaded`);
      return factory(ctx);
    };
  }
  return { registry: new SchedulerRegistry(entries, { sessionName: sessionName() }), factories, form };
}

/**
 * Imports the module of `scheduler` into `lazy` (of every enabled scheduler when undefined), once each. A
 * name that is not enabled is left to the registry, which refuses it with the enabled names.
 */
async function load(lazy: LazyRegistry, scheduler: string | undefined): Promise<void> {
  const enabled = config().schedulers;
  const wanted = scheduler === undefined ? enabled : enabled.filter((name) => name === scheduler);
  await Promise.all(
    wanted
      .filter((name) => !lazy.factories.has(name))
      .map(async (name) => {
        // The config admits only KNOWN_SCHEDULERS, each of which has loaders (the Record's type).
        const factory = await BACKENDS[name as KnownScheduler][lazy.form]();
        lazy.factories.set(name, factory(backendDeps()));
      }),
  );
}

/** What the Planner and the Runner share: the lazy registry, the session and the deployment's host access. */
function plannerOptions(schedulers: LazyRegistry): PlannerOptions {
  return {
    schedulers: schedulers.registry,
    sessionName: sessionName(),
    hostAccess: deploymentConfig().hostAccess,
    hostAccessSettings: HOST_ACCESS_SETTINGS,
  };
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

/**
 * The full Runner of this process, built on first use, with the modules of `scheduler` loaded (of every
 * enabled scheduler when omitted). Scheduler SDK clients are created when a request first uses their
 * scheduler.
 */
export async function runner(scheduler?: string): Promise<Runner> {
  if (builtRunner === undefined) {
    const schedulers = lazyRegistry('scheduler');
    builtRunner = { runner: new Runner({ ...plannerOptions(schedulers), store: runnerStore() }), schedulers };
  }
  const built = builtRunner;
  await load(built.schedulers, scheduler);
  return built.runner;
}

/**
 * The Planner of this process (dry runs, scheduler descriptions), built on first use over each scheduler's
 * translation, with that of `scheduler` loaded (of every enabled scheduler when omitted). In local mode the
 * full Runner plans, so one instance of each local scheduler serves dry runs and runs.
 */
export async function planner(scheduler?: string): Promise<Planner> {
  if (localMode) return runner(scheduler);
  if (builtPlanner === undefined) {
    const schedulers = lazyRegistry('translator');
    builtPlanner = { planner: new Planner(plannerOptions(schedulers)), schedulers };
  }
  const built = builtPlanner;
  await load(built.schedulers, scheduler);
  return built.planner;
}

/**
 * Local mode, before the server accepts requests: local_cwd settles the apps a previous server left running
 * (exit codes recorded meanwhile) and adopts the replicas still alive; their state changes go through the
 * in-process bus like any other. Returns the app ids it touched; none when local_cwd is not enabled.
 */
export async function recoverLocalApps(): Promise<string[]> {
  if (!config().schedulers.includes(LOCAL_CWD)) return [];
  const scheduler = (await runner(LOCAL_CWD)).scheduler(LOCAL_CWD);
  return scheduler instanceof LocalCwdScheduler ? scheduler.recover() : [];
}

/** Closes the Runner's schedulers (local mode shutdown), publishes what the local outbox holds, and forgets the clients and Runners. */
export async function closeRunner(): Promise<void> {
  const current = builtRunner?.runner;
  const outbox = builtRunnerStore as Partial<OutboxStore> | undefined;
  forget();
  await current?.close();
  await outbox?.drain?.();
}
