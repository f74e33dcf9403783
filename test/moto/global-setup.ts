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
import { type ChildProcess, spawn } from 'node:child_process';
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
import { createSigV4Signer } from '../../lib/cli/sigv4.js';
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

declare module 'vitest' {
  export interface ProvidedContext {
    /** moto's base URL, `http://127.0.0.1:<port>`. */
    motoEndpoint: string;
  }
}

/** How long moto may take to start (it imports every service's models). */
const START_TIMEOUT_MS = 60_000;
const INSTALL_HINT =
  "moto's server must be importable by the python3 on PATH (or TXS_MOTO_PYTHON): pip install 'moto[server]'";

/** Starts `python -m moto.server` on port 0 and resolves with its URL once it listens. */
function startMoto(): Promise<{ url: string; child: ChildProcess }> {
  const python = process.env.TXS_MOTO_PYTHON ?? 'python3';
  const child = spawn(python, ['-m', 'moto.server', '-H', '127.0.0.1', '-p', '0'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, PYTHONUNBUFFERED: '1' },
  });
  let output = '';
  return new Promise((resolve, reject) => {
    const fail = (message: string) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`${message}\n${INSTALL_HINT}\n--- moto output ---\n${output.slice(-4000)}`));
    };
    const timer = setTimeout(
      () => fail(`moto did not start listening within ${START_TIMEOUT_MS / 1000} s`),
      START_TIMEOUT_MS,
    );
    const onData = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const match = /Running on (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve({ url: match[1], child });
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('error', (error) => fail(`could not run ${python}: ${error.message}`));
    child.once('exit', (code, signal) => fail(`${python} -m moto.server exited (${signal ?? code})`));
    // Never leave moto behind, even when the run ends without its teardown.
    process.once('exit', () => child.kill('SIGKILL'));
  });
}

async function stopMoto(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.removeAllListeners('exit');
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
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

/**
 * IAM CreateRole through a SigV4-signed Query request (the project has no IAM SDK client; moto routes the
 * request by the signature's service name). Batch needs the role for its compute environment.
 */
async function createRole(endpoint: string, roleName: string): Promise<string> {
  const signer = createSigV4Signer({ region: MOTO_REGION, service: 'iam', credentials: MOTO_CREDENTIALS });
  const url = new URL(`${endpoint}/`);
  const body = new URLSearchParams({
    Action: 'CreateRole',
    Version: '2010-05-08',
    RoleName: roleName,
    AssumeRolePolicyDocument: JSON.stringify({
      Version: '2012-10-17',
      Statement: [
        { Effect: 'Allow', Principal: { Service: 'batch.amazonaws.com' }, Action: 'sts:AssumeRole' },
      ],
    }),
  }).toString();
  const headers = await signer.sign({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' },
    body,
  });
  const response = await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(10_000) });
  const text = await response.text();
  const arn = /<Arn>([^<]+)<\/Arn>/.exec(text)?.[1];
  if (!response.ok || arn === undefined)
    throw new Error(`IAM CreateRole on moto failed (${response.status}): ${text}`);
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
