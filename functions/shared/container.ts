/**
 * Clients and Runners, built from environment variables (names in env-names.ts) on first use, once per cold
 * start. SDK clients are created here and injected into the store and the schedulers; nothing else builds one.
 * Local mode configures an in-process event sink and an outbox publisher before the first call.
 *
 * Each function pays only for what it uses:
 * - {@link recordsRunner}: a Runner over the app record store alone (DynamoDB): list, status without refresh,
 *   the state-change function. A bundle that uses only this carries no scheduler code and no Batch,
 *   SageMaker or CloudWatch Logs SDK.
 * - {@link runner}: the full Runner (every enabled scheduler, wired in `backends/`). Each scheduler, and its
 *   SDK client, is created when a request first uses it.
 * - No Runner publishes events: the publisher function (functions/events/publisher.ts) puts committed
 *   changes from the table's stream on the bus; local mode wraps the store in the local outbox.
 * Scheduler modules are imported statically on purpose: esbuild inlines a dynamic `import()` into the
 * single-file bundle but then cannot tree-shake the SDK packages behind it (the bundles grew by 60%).
 */
import type { BatchClient } from '@aws-sdk/client-batch';
import type { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import type { SageMakerClient } from '@aws-sdk/client-sagemaker';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { localStateChangeEvent } from '../../lib/events/index.js';
import { type OutboxStore, withLocalOutbox } from '../../lib/events/local-outbox.js';
import { type AppRecordStore, type AppStateChangePublisher, Runner } from '../../lib/runner/index.js';
import { LOCAL_CWD, LocalCwdScheduler } from '../../lib/schedulers/local-cwd/index.js';
import { type SchedulerFactory, SchedulerRegistry } from '../../lib/schedulers/registry.js';
import { UnknownSchedulerError } from '../../lib/specs/index.js';
import { DynamoAppRecordStore } from '../../lib/store/index.js';
import { awsBatchFactory } from './backends/aws-batch.js';
import { awsSageMakerFactory } from './backends/aws-sagemaker.js';
import type { BackendDeps } from './backends/deps.js';
import {
  kubernetesFactory,
  kubernetesMcadFactory,
  localDockerFactory,
  lsfFactory,
} from './backends/dry-run-only.js';
import { localCwdFactory } from './backends/local-cwd.js';
import { slurmFactory } from './backends/slurm.js';
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
  /** How the record store's DynamoDB client sends its requests (local mode: to dynalite in process). */
  dynamoDbRequestHandler?: DynamoDBClientConfig['requestHandler'];
  /**
   * Wraps the store the Runners use (local mode: its read-through record cache); `records` is the DynamoDB
   * store under it.
   */
  wrapRecordStore?: (store: AppRecordStore, records: DynamoAppRecordStore) => AppRecordStore;
}

/** Any SDK client the container creates. */
export type SdkClient = DynamoDBClient | BatchClient | SageMakerClient | CloudWatchLogsClient;

/** Called with every SDK client the container creates, before its first use. */
export type ClientHook = (client: SdkClient) => void;

let hooks: LocalModeHooks = {};
let clientHook: ClientHook | undefined;
let tracingHook: ClientHook | undefined;
let builtConfig: FunctionConfig | undefined;
let builtStore: DynamoAppRecordStore | undefined;
let builtRunnerStore: AppRecordStore | undefined;
let builtRecordsRunner: Runner | undefined;
let builtRunner: Runner | undefined;
let builtRegistry: SchedulerRegistry | undefined;

function forget(): void {
  forgetDeploymentConfig();
  builtConfig = undefined;
  builtStore = undefined;
  builtRunnerStore = undefined;
  builtRecordsRunner = undefined;
  builtRunner = undefined;
  builtRegistry = undefined;
}

/** Local mode: set the in-process bus and publisher. Must run before the first Runner is built. */
export function configureLocalMode(localHooks: LocalModeHooks): void {
  hooks = localHooks;
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
            ...(hooks.dynamoDbRequestHandler ? { requestHandler: hooks.dynamoDbRequestHandler } : {}),
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
 * a publisher (in AWS, the table's stream feeds the publisher function instead), then in what local mode's
 * `wrapRecordStore` adds (its record cache).
 */
function runnerStore(): AppRecordStore {
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

/**
 * A Runner over the record store alone: `get`, `list`, `applyNativeTransition` and the other record verbs.
 * Asking it for a scheduler fails (none is registered): use {@link runner} for those.
 */
export function recordsRunner(): Runner {
  builtRecordsRunner ??= new Runner({
    schedulers: new SchedulerRegistry({}, { sessionName: sessionName() }),
    store: runnerStore(),
    sessionName: sessionName(),
  });
  return builtRecordsRunner;
}

const BACKENDS: Readonly<Record<KnownScheduler, (deps: BackendDeps) => SchedulerFactory>> = {
  aws_batch: awsBatchFactory,
  aws_sagemaker: awsSageMakerFactory,
  local_cwd: localCwdFactory,
  slurm: () => slurmFactory(),
  local_docker: localDockerFactory,
  lsf: lsfFactory,
  kubernetes: kubernetesFactory,
  kubernetes_mcad: kubernetesMcadFactory,
};

function build(): Runner {
  const deployment = deploymentConfig();
  let logsClient: CloudWatchLogsClient | undefined;
  const deps: BackendDeps = {
    created,
    logsClient: (make) => {
      logsClient ??= created(make());
      return logsClient;
    },
    config: config(),
    deployment,
    emitLocalTransition: async (appId, transition) => {
      await hooks.emitEvent?.(localStateChangeEvent(appId, transition));
    },
  };
  const factories: Record<string, SchedulerFactory> = {};
  for (const name of deps.config.schedulers) {
    // The config admits only KNOWN_SCHEDULERS, each of which has a backend (the Record's type).
    const backend = BACKENDS[name as KnownScheduler];
    factories[name] = backend(deps);
  }
  builtRegistry = new SchedulerRegistry(factories, { sessionName: sessionName() });
  return new Runner({
    schedulers: builtRegistry,
    store: runnerStore(),
    sessionName: sessionName(),
    hostAccess: deployment.hostAccess,
    hostAccessSettings: HOST_ACCESS_SETTINGS,
  });
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
 * The full Runner of this process (every enabled scheduler), built on first use. Scheduler SDK clients are
 * created when a request first uses their scheduler.
 */
export function runner(): Runner {
  builtRunner ??= build();
  return builtRunner;
}

/**
 * Local mode, before the server accepts requests: local_cwd settles the apps a previous server left running
 * (exit codes recorded meanwhile) and adopts the replicas still alive; their state changes go through the
 * in-process bus like any other. Returns the app ids it touched; none when local_cwd is not enabled.
 */
export async function recoverLocalApps(): Promise<string[]> {
  runner();
  if (!builtRegistry?.has(LOCAL_CWD)) return [];
  const scheduler = builtRegistry.get(LOCAL_CWD);
  return scheduler instanceof LocalCwdScheduler ? scheduler.recover() : [];
}

/** Closes the Runner's schedulers (local mode shutdown), publishes what the local outbox holds, and forgets the clients and Runners. */
export async function closeRunner(): Promise<void> {
  const current = builtRunner;
  const outbox = builtRunnerStore as Partial<OutboxStore> | undefined;
  forget();
  await current?.close();
  await outbox?.drain?.();
}
