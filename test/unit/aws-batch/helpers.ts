/**
 * Test helpers for the aws_batch scheduler: SDK clients that never leave the process, Batch response shapes
 * (from the Batch API model), and a wire-level fake HTTP handler to exercise the SDK's own retries.
 */
import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { BatchClient, type JobDetail } from '@aws-sdk/client-batch';
import { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import { ConfiguredRetryStrategy } from '@smithy/core/retry';
import { type HttpRequest, HttpResponse } from '@smithy/protocol-http';
import { mockClient } from 'aws-sdk-client-mock';
import {
  AwsBatchScheduler,
  type AwsBatchSchedulerOptions,
  createAwsBatchScheduler,
} from '../../../lib/schedulers/aws-batch/index.js';
import {
  type AppDef,
  type Mount,
  makeAppDef,
  makeResource,
  makeRole,
  type Role,
} from '../../../lib/specs/index.js';

const credentials = { accessKeyId: 'test', secretAccessKey: 'test' };

/** A Batch client for aws-sdk-client-mock (its `send` is replaced; nothing reaches the network). */
export function fakeBatchClient(): BatchClient {
  return new BatchClient({ region: 'us-east-1', credentials, maxAttempts: 1 });
}

/** A CloudWatch Logs client for aws-sdk-client-mock. */
export function fakeLogsClient(): CloudWatchLogsClient {
  return new CloudWatchLogsClient({ region: 'us-east-1', credentials, maxAttempts: 1 });
}

/** A scheduler with mocked clients, a fixed job-name suffix and a fixed clock. */
export function mockedScheduler(
  options: AwsBatchSchedulerOptions & { now?: number; sleep?: (ms: number) => Promise<void> } = {},
) {
  const batchClient = fakeBatchClient();
  const logsClient = fakeLogsClient();
  const batch = mockClient(batchClient);
  const logs = mockClient(logsClient);
  const now = options.now ?? 1_735_740_000_000;
  const scheduler = createAwsBatchScheduler(
    { sessionName: 'torchx', now: () => now, sleep: options.sleep ?? (async () => {}) },
    { batchClient, logsClient, defaultUser: 'alice', uniqueNamer: (p) => `${p}-t4rcs9x6sv1m`, ...options },
  );
  return { scheduler, batch, logs, batchClient, logsClient };
}

/** One canned HTTP response of the fake wire. */
export interface WireResponse {
  status: number;
  body: unknown;
  errorType?: string;
}

/**
 * A Batch client whose HTTP handler answers from `responses` in order (the SDK's serializers, retry
 * middleware and error parsing all run), retrying up to `maxAttempts` with no delay.
 */
export function wireBatchClient(responses: WireResponse[], maxAttempts = 3) {
  const requests: string[] = [];
  const requestHandler = {
    async handle(request: HttpRequest) {
      requests.push(`${request.method} ${request.path}`);
      const next = responses.shift();
      if (next === undefined) throw new Error(`unexpected request ${request.method} ${request.path}`);
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (next.errorType !== undefined) headers['x-amzn-errortype'] = next.errorType;
      return {
        response: new HttpResponse({
          statusCode: next.status,
          headers,
          body: Readable.from([Buffer.from(JSON.stringify(next.body))]),
        }),
      };
    },
    updateHttpClientConfig() {},
    httpHandlerConfigs() {
      return {};
    },
  };
  const client = new BatchClient({
    region: 'us-east-1',
    credentials,
    requestHandler,
    retryStrategy: new ConfiguredRetryStrategy(maxAttempts, () => 0),
  });
  return { client, requests };
}

/** A scheduler over a wire-level fake Batch client. */
export function wireScheduler(responses: WireResponse[], maxAttempts = 3) {
  const { client, requests } = wireBatchClient(responses, maxAttempts);
  const scheduler = new AwsBatchScheduler(
    { sessionName: 'torchx' },
    {
      batchClient: client,
      logsClient: fakeLogsClient(),
      defaultUser: 'alice',
      uniqueNamer: (p) => `${p}-42`,
    },
  );
  return { scheduler, requests };
}

export const ACCOUNT = '123456789012';
export const QUEUE_ARN = `arn:aws:batch:us-east-1:${ACCOUNT}:job-queue/gpu`;
export const JOB_ID = '7b3e1c5a-9d2f-4a8b-b6c4-2e1f0d9c8b7a';
export const JOB_ARN = `arn:aws:batch:us-east-1:${ACCOUNT}:job/${JOB_ID}`;

/** A DescribeJobs job as Batch returns it for a job torchx-serverless submitted (two roles: 1 + 2 nodes). */
export function parentJob(overrides: Partial<JobDetail> = {}): JobDetail {
  return {
    jobArn: JOB_ARN,
    jobName: 'train-t4rcs9x6sv1m',
    jobId: JOB_ID,
    jobQueue: QUEUE_ARN,
    status: 'RUNNING',
    attempts: [],
    createdAt: 1_735_732_800_000,
    startedAt: 1_735_733_218_000,
    retryStrategy: { attempts: 1, evaluateOnExit: [{ onExitCode: '0', action: 'EXIT' }] },
    dependsOn: [],
    jobDefinition: `arn:aws:batch:us-east-1:${ACCOUNT}:job-definition/train-t4rcs9x6sv1m:1`,
    parameters: {},
    nodeProperties: {
      numNodes: 3,
      mainNode: 0,
      nodeRangeProperties: [
        {
          targetNodes: '0:0',
          container: {
            image: 'ghcr.io/pytorch/torchx:0.8.0dev0',
            command: ['python', '-m', 'ps'],
            environment: [
              { name: 'TORCHX_ROLE_IDX', value: '0' },
              { name: 'TORCHX_ROLE_NAME', value: 'ps' },
            ],
            resourceRequirements: [
              { type: 'VCPU', value: '2' },
              { type: 'MEMORY', value: '4096' },
            ],
            logConfiguration: { logDriver: 'awslogs', options: {}, secretOptions: [] },
          },
        },
        {
          targetNodes: '1:2',
          container: {
            image: 'ghcr.io/pytorch/torchx:0.8.0dev0',
            command: ['torchrun', '--nnodes', '2', 'train.py'],
            environment: [
              { name: 'LR', value: '0.1' },
              { name: 'TORCHX_ROLE_IDX', value: '1' },
              { name: 'TORCHX_ROLE_NAME', value: 'trainer' },
            ],
            resourceRequirements: [
              { type: 'VCPU', value: '8' },
              { type: 'MEMORY', value: '31456' },
              { type: 'GPU', value: '1' },
            ],
            logConfiguration: {
              logDriver: 'awslogs',
              options: { 'awslogs-group': '/ml/jobs' },
              secretOptions: [],
            },
          },
        },
      ],
    },
    tags: {
      'torchx.pytorch.org/version': '0.8.0dev0',
      'torchx.pytorch.org/app-name': 'train',
      'torchx.pytorch.org/user': 'alice',
      resourceArn: JOB_ARN,
    },
    platformCapabilities: ['EC2'],
    ...overrides,
  };
}

/** A node job (`<parent>#<index>`) of {@link parentJob}. */
export function nodeJob(index: number, overrides: Partial<JobDetail> = {}): JobDetail {
  return {
    jobArn: `${JOB_ARN}#${index}`,
    jobName: 'train-t4rcs9x6sv1m',
    jobId: `${JOB_ID}#${index}`,
    jobQueue: QUEUE_ARN,
    status: 'RUNNING',
    attempts: [],
    createdAt: 1_735_732_800_000,
    startedAt: 1_735_733_218_000,
    jobDefinition: `arn:aws:batch:us-east-1:${ACCOUNT}:job-definition/train-t4rcs9x6sv1m:1`,
    nodeDetails: { nodeIndex: index, isMainNode: index === 0 },
    container: {
      logStreamName: `train-t4rcs9x6sv1m/default/task${index}`,
      networkInterfaces: [{ privateIpv4Address: `10.0.0.${10 + index}` }],
    },
    ...overrides,
  };
}

/** Reads a fixture file under test/fixtures/aws-batch. */
export function fixture<T>(name: string): T {
  return JSON.parse(readFileSync(new URL(`../../fixtures/aws-batch/${name}`, import.meta.url), 'utf8')) as T;
}

interface TorchxMount {
  type: 'bind' | 'volume' | 'device';
  src_path?: string;
  src?: string;
  dst_path: string;
  read_only?: boolean;
  permissions?: string;
}

/** A role as TorchX's fixtures write it (snake_case). */
export interface TorchxRole {
  name: string;
  image: string;
  entrypoint: string;
  args: string[];
  env: Record<string, string>;
  num_replicas: number;
  max_retries: number;
  retry_policy: 'REPLICA' | 'APPLICATION' | 'ROLE';
  resource: {
    cpu: number;
    gpu: number;
    memMB: number;
    capabilities: Record<string, string>;
    devices: Record<string, number>;
  };
  port_map: Record<string, number>;
  metadata: Record<string, unknown>;
  mounts: TorchxMount[];
}

/** Converts a TorchX fixture role to our camelCase Role. */
export function roleFromTorchx(role: TorchxRole): Role {
  return makeRole({
    name: role.name,
    image: role.image,
    entrypoint: role.entrypoint,
    args: role.args,
    env: role.env,
    numReplicas: role.num_replicas,
    maxRetries: role.max_retries,
    retryPolicy: role.retry_policy,
    resource: makeResource(role.resource),
    portMap: role.port_map,
    metadata: role.metadata,
    mounts: role.mounts.map((m): Mount => {
      if (m.type === 'bind')
        return {
          type: 'bind',
          srcPath: m.src_path ?? '',
          dstPath: m.dst_path,
          readOnly: m.read_only ?? false,
        };
      if (m.type === 'volume')
        return { type: 'volume', src: m.src ?? '', dstPath: m.dst_path, readOnly: m.read_only ?? false };
      return {
        type: 'device',
        srcPath: m.src_path ?? '',
        dstPath: m.dst_path,
        permissions: m.permissions ?? 'rwm',
      };
    }),
  });
}

/** Converts a TorchX fixture AppDef. */
export function appFromTorchx(app: {
  name: string;
  roles: TorchxRole[];
  metadata: Record<string, string>;
}): AppDef {
  return makeAppDef({ name: app.name, roles: app.roles.map(roleFromTorchx), metadata: app.metadata });
}
