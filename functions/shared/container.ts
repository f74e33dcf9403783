/**
 * Clients and Runners, built from environment variables (names in env-names.ts) on first use, once per cold
 * start. SDK clients are created here and injected into the store and the schedulers; nothing else builds one.
 * Local mode configures an in-process event sink and publisher before the first call.
 *
 * Each function pays only for what it uses:
 * - {@link recordsRunner}: a Runner over the app record store alone (DynamoDB): list, status without refresh,
 *   the state-change function. A bundle that uses only this carries no scheduler code and no Batch,
 *   SageMaker or CloudWatch Logs SDK.
 * - {@link runner}: the full Runner (every enabled scheduler, wired in `backends/`). Each scheduler, and its
 *   SDK client, is created when a request first uses it.
 * - The EventBridge client is created with the publisher, when a bus is configured.
 * Scheduler modules are imported statically on purpose: esbuild inlines a dynamic `import()` into the
 * single-file bundle but then cannot tree-shake the SDK packages behind it (the bundles grew by 60%).
 */
import type { BatchClient } from '@aws-sdk/client-batch';
import type { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import type { SageMakerClient } from '@aws-sdk/client-sagemaker';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { localStateChangeEvent } from '../../lib/events/index.js';
import { type AppStateChangePublisher, NO_PUBLISHER, Runner } from '../../lib/runner/index.js';
import { type SchedulerFactory, SchedulerRegistry } from '../../lib/schedulers/registry.js';
import { DEFAULT_SESSION, ValidationError } from '../../lib/specs/index.js';
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
import { eventBridgePublisher } from './backends/event-bridge.js';
import { localCwdFactory } from './backends/local-cwd.js';
import { ENV } from './env-names.js';

/** Schedulers enabled when TXS_SCHEDULERS is not set (the deployed stack). */
export const DEFAULT_SCHEDULERS = ['aws_batch', 'aws_sagemaker'];

/** Hooks local mode sets before the first request. */
export interface LocalModeHooks {
  /** Receives local scheduler events as EventBridge events (the in-process bus). */
  emitEvent?: (event: ReturnType<typeof localStateChangeEvent>) => Promise<void>;
  /** Where accepted transitions are published instead of EventBridge. */
  publisher?: AppStateChangePublisher;
}

/** Any SDK client the container creates. */
export type SdkClient =
  | DynamoDBClient
  | BatchClient
  | SageMakerClient
  | CloudWatchLogsClient
  | EventBridgeClient;

/** Called with every SDK client the container creates, before its first use. */
export type ClientHook = (client: SdkClient) => void;

let hooks: LocalModeHooks = {};
let clientHook: ClientHook | undefined;
let builtStore: DynamoAppRecordStore | undefined;
let builtPublisher: AppStateChangePublisher | undefined;
let builtRecordsRunner: Runner | undefined;
let builtRunner: Runner | undefined;

function forget(): void {
  builtStore = undefined;
  builtPublisher = undefined;
  builtRecordsRunner = undefined;
  builtRunner = undefined;
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

function created<T extends object>(client: T): T {
  clientHook?.(client as SdkClient);
  return client;
}

function requireEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`environment variable ${name} is not set`);
  return value;
}

function listEnv(name: string, fallback: string[]): string[] {
  const raw = process.env[name];
  if (!raw) return fallback;
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

/** The default session name for new handles. */
export function sessionName(): string {
  return process.env[ENV.sessionName] || DEFAULT_SESSION;
}

/** The app record store (DynamoDB), built on first use. */
export function store(): DynamoAppRecordStore {
  if (builtStore) return builtStore;
  const endpoint = process.env[ENV.dynamoDbEndpoint];
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
  const retentionDays = Number(process.env[ENV.retentionDays] ?? '90');
  builtStore = new DynamoAppRecordStore({
    documentClient,
    tableName: requireEnv(ENV.tableName),
    retentionDays: Number.isFinite(retentionDays) && retentionDays > 0 ? retentionDays : 90,
  });
  return builtStore;
}

function publisher(): AppStateChangePublisher {
  if (builtPublisher) return builtPublisher;
  const busName = process.env[ENV.eventBusName];
  builtPublisher = hooks.publisher ?? (busName ? eventBridgePublisher(busName, created) : NO_PUBLISHER);
  return builtPublisher;
}

/**
 * A Runner over the record store alone: `get`, `list`, `applyNativeTransition` and the other record verbs.
 * Asking it for a scheduler fails (none is registered): use {@link runner} for those.
 */
export function recordsRunner(): Runner {
  builtRecordsRunner ??= new Runner({
    schedulers: new SchedulerRegistry({}, { sessionName: sessionName() }),
    store: store(),
    sessionName: sessionName(),
    publisher: publisher(),
  });
  return builtRecordsRunner;
}

const BACKENDS: Readonly<Record<string, (deps: BackendDeps) => SchedulerFactory>> = {
  aws_batch: awsBatchFactory,
  aws_sagemaker: awsSageMakerFactory,
  local_cwd: localCwdFactory,
  local_docker: localDockerFactory,
  lsf: lsfFactory,
  kubernetes: kubernetesFactory,
  kubernetes_mcad: kubernetesMcadFactory,
};

function build(): Runner {
  let logsClient: CloudWatchLogsClient | undefined;
  const deps: BackendDeps = {
    created,
    logsClient: (make) => {
      logsClient ??= created(make());
      return logsClient;
    },
    requireEnv,
    listEnv,
    emitLocalTransition: async (appId, transition) => {
      await hooks.emitEvent?.(localStateChangeEvent(appId, transition));
    },
  };
  const factories: Record<string, SchedulerFactory> = {};
  for (const name of listEnv(ENV.schedulers, DEFAULT_SCHEDULERS)) {
    const backend = BACKENDS[name];
    if (!backend) {
      throw new ValidationError(
        `${ENV.schedulers} names an unknown scheduler '${name}'; use ${Object.keys(BACKENDS).join(', ')}`,
      );
    }
    factories[name] = backend(deps);
  }
  return new Runner({
    schedulers: new SchedulerRegistry(factories, { sessionName: sessionName() }),
    store: store(),
    sessionName: sessionName(),
    publisher: publisher(),
  });
}

/**
 * The full Runner of this process (every enabled scheduler), built on first use. Scheduler SDK clients are
 * created when a request first uses their scheduler.
 */
export function runner(): Runner {
  builtRunner ??= build();
  return builtRunner;
}

/** Closes the Runner's schedulers (local mode shutdown) and forgets the clients and Runners. */
export async function closeRunner(): Promise<void> {
  const current = builtRunner;
  forget();
  await current?.close();
}
