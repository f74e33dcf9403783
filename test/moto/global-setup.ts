/**
 * Global setup of `npm run test:moto`: starts moto (an AWS emulator) on a free loopback port as a child
 * process, creates the AWS resources the suite runs against, hands the endpoint to the test files
 * (`inject('motoEndpoint')`), and stops moto afterwards.
 *
 * Resources: Batch without Docker (jobs finish at SubmitJob), an IAM role, an UNMANAGED compute environment
 * and the job queue {@link MOTO_QUEUE}, the log groups Batch and SageMaker write to, and the app record
 * table from `lib/store/table.ts` (with its TTL, as the stack deploys it), and an EventBridge bus whose rule
 * for `AppState Change` events delivers them to a log group (where a test reads what was published).
 */
import { BatchClient, CreateComputeEnvironmentCommand, CreateJobQueueCommand } from '@aws-sdk/client-batch';
import { CloudWatchLogsClient, CreateLogGroupCommand } from '@aws-sdk/client-cloudwatch-logs';
import { CreateTableCommand, DynamoDBClient, UpdateTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import {
  CreateEventBusCommand,
  EventBridgeClient,
  PutRuleCommand,
  PutTargetsCommand,
} from '@aws-sdk/client-eventbridge';
import type { TestProject } from 'vitest/node';
import { LOCAL_TABLE_NAME } from '../../lib/local/server.js';
import { APP_STATE_CHANGE_DETAIL_TYPE, APP_STATE_CHANGE_SOURCE } from '../../lib/runner/index.js';
import { createTableInput, updateTimeToLiveInput } from '../../lib/store/index.js';
import {
  MOTO_CREDENTIALS,
  MOTO_EVENT_BUS,
  MOTO_EVENTS_LOG_GROUP,
  MOTO_LOG_GROUPS,
  MOTO_QUEUE,
  MOTO_REGION,
} from './constants.js';
import { iamQuery, startMoto, stopMoto } from './moto-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** moto's base URL, `http://127.0.0.1:<port>`. */
    motoEndpoint: string;
  }
}

/** A JSON POST to moto's own API (`/moto-api/...`), with a clear error when it fails. */
async function motoApi(endpoint: string, path: string, body: unknown): Promise<void> {
  const response = await fetch(`${endpoint}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  if (!response.ok) throw new Error(`moto ${path} answered ${response.status}: ${await response.text()}`);
}

/** IAM CreateRole: Batch needs the role for its compute environment. */
async function createRole(endpoint: string, roleName: string): Promise<string> {
  const text = await iamQuery(endpoint, 'CreateRole', {
    RoleName: roleName,
    AssumeRolePolicyDocument: JSON.stringify({
      Version: '2012-10-17',
      Statement: [
        { Effect: 'Allow', Principal: { Service: 'batch.amazonaws.com' }, Action: 'sts:AssumeRole' },
      ],
    }),
  });
  const arn = /<Arn>([^<]+)<\/Arn>/.exec(text)?.[1];
  if (arn === undefined) throw new Error(`IAM CreateRole on moto answered no ARN: ${text}`);
  return arn;
}

/** Creates what the suite runs against on a fresh moto. */
async function createResources(endpoint: string): Promise<void> {
  await motoApi(endpoint, '/moto-api/config', { batch: { use_docker: false } });
  const common = { endpoint, region: MOTO_REGION, credentials: MOTO_CREDENTIALS };
  const batch = new BatchClient(common);
  const logs = new CloudWatchLogsClient(common);
  const dynamo = new DynamoDBClient(common);
  const events = new EventBridgeClient(common);
  try {
    const serviceRole = await createRole(endpoint, 'txs-moto-batch');
    await batch.send(
      new CreateComputeEnvironmentCommand({
        computeEnvironmentName: 'txs-moto-ce',
        type: 'UNMANAGED',
        state: 'ENABLED',
        serviceRole,
      }),
    );
    await batch.send(
      new CreateJobQueueCommand({
        jobQueueName: MOTO_QUEUE,
        state: 'ENABLED',
        priority: 1,
        computeEnvironmentOrder: [{ order: 1, computeEnvironment: 'txs-moto-ce' }],
      }),
    );
    for (const logGroupName of MOTO_LOG_GROUPS) await logs.send(new CreateLogGroupCommand({ logGroupName }));
    await dynamo.send(new CreateTableCommand(createTableInput(LOCAL_TABLE_NAME)));
    await dynamo.send(new UpdateTimeToLiveCommand(updateTimeToLiveInput(LOCAL_TABLE_NAME)));
    await events.send(new CreateEventBusCommand({ Name: MOTO_EVENT_BUS }));
    await logs.send(new CreateLogGroupCommand({ logGroupName: MOTO_EVENTS_LOG_GROUP }));
    await events.send(
      new PutRuleCommand({
        Name: 'txs-moto-app-state',
        EventBusName: MOTO_EVENT_BUS,
        EventPattern: JSON.stringify({
          source: [APP_STATE_CHANGE_SOURCE],
          'detail-type': [APP_STATE_CHANGE_DETAIL_TYPE],
        }),
      }),
    );
    await events.send(
      new PutTargetsCommand({
        Rule: 'txs-moto-app-state',
        EventBusName: MOTO_EVENT_BUS,
        Targets: [
          { Id: 'log', Arn: `arn:aws:logs:${MOTO_REGION}:123456789012:log-group:${MOTO_EVENTS_LOG_GROUP}` },
        ],
      }),
    );
  } finally {
    events.destroy();
    batch.destroy();
    logs.destroy();
    dynamo.destroy();
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const { url, child } = await startMoto();
  try {
    await createResources(url);
  } catch (error) {
    await stopMoto(child);
    throw error;
  }
  project.provide('motoEndpoint', url);
  return () => stopMoto(child);
}
