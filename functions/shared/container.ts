/**
 * Clients and the Runner, built once per cold start from environment variables (names in env-names.ts).
 * SDK clients are created here and injected into the store and the schedulers; nothing else builds one.
 * Local mode configures an in-process event sink and publisher before the first call.
 */
import { BatchClient } from '@aws-sdk/client-batch';
import { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { SageMakerClient } from '@aws-sdk/client-sagemaker';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { localStateChangeEvent } from '../../lib/events/index.js';
import {
  APP_STATE_CHANGE_DETAIL_TYPE,
  APP_STATE_CHANGE_SOURCE,
  type AppStateChangePublisher,
  NO_PUBLISHER,
  Runner,
} from '../../lib/runner/index.js';
import { createAwsBatchScheduler } from '../../lib/schedulers/aws-batch/index.js';
import { createAwsSageMakerScheduler } from '../../lib/schedulers/aws-sagemaker/index.js';
import { type SchedulerFactory, SchedulerRegistry } from '../../lib/schedulers/index.js';
import { createLocalCwdScheduler } from '../../lib/schedulers/local-cwd/index.js';
import { DEFAULT_SESSION, ValidationError } from '../../lib/specs/index.js';
import { DynamoAppRecordStore } from '../../lib/store/index.js';
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

let hooks: LocalModeHooks = {};
let built: Runner | undefined;

/** Local mode: set the in-process bus and publisher. Must run before the first `runner()` call. */
export function configureLocalMode(localHooks: LocalModeHooks): void {
  hooks = localHooks;
  built = undefined;
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

function eventBridgePublisher(busName: string, client: EventBridgeClient): AppStateChangePublisher {
  return {
    async publish(event) {
      await client.send(
        new PutEventsCommand({
          Entries: [
            {
              EventBusName: busName,
              Source: APP_STATE_CHANGE_SOURCE,
              DetailType: APP_STATE_CHANGE_DETAIL_TYPE,
              Resources: [],
              Detail: JSON.stringify(event),
            },
          ],
        }),
      );
    },
  };
}

function build(): Runner {
  const endpoint = process.env[ENV.dynamoDbEndpoint];
  const dynamo = new DynamoDBClient(
    endpoint
      ? {
          endpoint,
          region: process.env.AWS_REGION ?? 'local',
          credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
        }
      : {},
  );
  const documentClient = DynamoDBDocumentClient.from(dynamo, {
    marshallOptions: { removeUndefinedValues: true },
  });
  const retentionDays = Number(process.env[ENV.retentionDays] ?? '90');
  const store = new DynamoAppRecordStore({
    documentClient,
    tableName: requireEnv(ENV.tableName),
    retentionDays: Number.isFinite(retentionDays) && retentionDays > 0 ? retentionDays : 90,
  });

  let logsClient: CloudWatchLogsClient | undefined;
  const logs = () => {
    logsClient ??= new CloudWatchLogsClient({});
    return logsClient;
  };
  const factories: Record<string, SchedulerFactory> = {};
  for (const name of listEnv(ENV.schedulers, DEFAULT_SCHEDULERS)) {
    switch (name) {
      case 'aws_batch':
        factories[name] = (ctx) =>
          createAwsBatchScheduler(ctx, {
            batchClient: new BatchClient({}),
            logsClient: logs(),
            queues: listEnv(ENV.batchQueues, []),
          });
        break;
      case 'aws_sagemaker':
        factories[name] = (ctx) =>
          createAwsSageMakerScheduler(ctx, { sageMakerClient: new SageMakerClient({}), logsClient: logs() });
        break;
      case 'local_cwd':
        factories[name] = (ctx) =>
          createLocalCwdScheduler(ctx, {
            dataDir: requireEnv(ENV.localDataDir),
            onStateChange: async ({ appId, ...transition }) => {
              await hooks.emitEvent?.(localStateChangeEvent(appId, transition));
            },
          });
        break;
      default:
        throw new ValidationError(`${ENV.schedulers} names an unknown scheduler '${name}'`);
    }
  }
  const sessionName = process.env[ENV.sessionName] || DEFAULT_SESSION;
  const busName = process.env[ENV.eventBusName];
  const publisher =
    hooks.publisher ?? (busName ? eventBridgePublisher(busName, new EventBridgeClient({})) : NO_PUBLISHER);
  return new Runner({
    schedulers: new SchedulerRegistry(factories, { sessionName }),
    store,
    sessionName,
    publisher,
  });
}

/** Closes the Runner's schedulers (local mode shutdown) and forgets it. */
export async function closeRunner(): Promise<void> {
  const current = built;
  built = undefined;
  await current?.close();
}

/** The Runner of this process, built on first use. */
export function runner(): Runner {
  built ??= build();
  return built;
}
