/**
 * X-Ray subsegments of the functions' AWS SDK calls (functions/shared/tracing.ts), as the X-Ray daemon gets
 * them: a UDP socket on loopback stands in for the daemon. The DynamoDB calls go to dynalite through the
 * container's store; Batch, SageMaker, CloudWatch Logs and EventBridge calls go to a loopback HTTP endpoint
 * (`AWS_ENDPOINT_URL`) that answers as the service would.
 */
import { execFile } from 'node:child_process';
import { createSocket, type Socket } from 'node:dgram';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { BatchClient, ListJobsCommand } from '@aws-sdk/client-batch';
import { type CloudWatchLogsClient, GetLogEventsCommand } from '@aws-sdk/client-cloudwatch-logs';
import { DescribeTrainingJobCommand, type SageMakerClient } from '@aws-sdk/client-sagemaker';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { eventBridgePutEvents } from '../../../functions/events/put-events.js';
import type { SdkClient } from '../../../functions/shared/container.js';
import { traceSdkCalls, XRAY_MIDDLEWARE_NAME } from '../../../functions/shared/tracing.js';
import { type Dynalite, startDynalite } from '../../helpers/dynalite.js';

type Container = typeof import('../../../functions/shared/container.js');

const TRACE_ID = '1-6744a1b2-0123456789abcdef01234567';
const PARENT_ID = '53995c3f42cd8ad8';
const HANDLE = 'aws_batch://torchx/q:train-1';

interface Subsegment {
  type: string;
  id: string;
  trace_id: string;
  parent_id: string;
  name: string;
  namespace: string;
  start_time: number;
  end_time: number;
  aws: Record<string, unknown>;
  http?: { response: { status: number } };
  error?: boolean;
  throttle?: boolean;
  fault?: boolean;
  cause?: { exceptions: { type: string; message: string; remote: boolean }[] };
}

/** The daemon stand-in: every datagram's header line and document, and a wait for the next ones. */
interface Daemon {
  address: string;
  headers: string[];
  documents: Subsegment[];
  /** Resolves with the documents once `count` more than `since` have arrived. */
  received(count: number, since?: number): Promise<Subsegment[]>;
}

async function startDaemon(): Promise<Daemon & { socket: Socket }> {
  const socket = createSocket('udp4');
  const headers: string[] = [];
  const documents: Subsegment[] = [];
  socket.on('message', (message) => {
    const text = message.toString('utf8');
    headers.push(text.slice(0, text.indexOf('\n')));
    documents.push(JSON.parse(text.slice(text.indexOf('\n') + 1)) as Subsegment);
  });
  socket.bind(0, '127.0.0.1');
  await once(socket, 'listening');
  return {
    socket,
    address: `127.0.0.1:${socket.address().port}`,
    headers,
    documents,
    received: async (count, since = 0) => {
      while (documents.length < since + count) await once(socket, 'message');
      return documents.slice(since, since + count);
    },
  };
}

/** A loopback AWS endpoint: answers each request with the next queued answer, else 200 `{}`. */
interface AwsEndpoint {
  url: string;
  answers: { status: number; body: object; headers?: Record<string, string> }[];
  server: Server;
}

async function startAwsEndpoint(): Promise<AwsEndpoint> {
  const endpoint = { answers: [] } as unknown as AwsEndpoint;
  endpoint.server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const answer = endpoint.answers.shift() ?? { status: 200, body: {} };
      res.writeHead(answer.status, {
        'content-type': 'application/json',
        'x-amzn-requestid': `req-${answer.status}`,
        ...answer.headers,
      });
      res.end(JSON.stringify(answer.body));
    });
  });
  endpoint.server.listen(0, '127.0.0.1');
  await once(endpoint.server, 'listening');
  endpoint.url = `http://127.0.0.1:${(endpoint.server.address() as AddressInfo).port}`;
  return endpoint;
}

let db: Dynalite;
let daemon: Daemon & { socket: Socket };
let aws: AwsEndpoint;
let container: Container;
const built = new Map<string, SdkClient>();

function sampled(flag: '0' | '1' = '1'): string {
  return `Root=${TRACE_ID};Parent=${PARENT_ID};Sampled=${flag}`;
}

beforeAll(async () => {
  [db, daemon, aws] = await Promise.all([startDynalite(), startDaemon(), startAwsEndpoint()]);
  container = await import('../../../functions/shared/container.js');
});
afterAll(async () => {
  container.configureClients(undefined);
  daemon.socket.close();
  aws.server.close();
  await db.close();
});
beforeEach(() => {
  vi.stubEnv('TXS_TABLE_NAME', db.tableName);
  vi.stubEnv('TXS_DYNAMODB_ENDPOINT', db.endpoint);
  vi.stubEnv('TXS_SCHEDULERS', 'aws_batch,aws_sagemaker');
  vi.stubEnv('TXS_BATCH_QUEUES', 'q');
  vi.stubEnv('TXS_EVENT_BUS_NAME', 'txs-events');
  vi.stubEnv('AWS_REGION', 'us-east-1');
  vi.stubEnv('AWS_ACCESS_KEY_ID', 'test');
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'test');
  vi.stubEnv('AWS_ENDPOINT_URL', aws.url);
  vi.stubEnv('AWS_XRAY_DAEMON_ADDRESS', daemon.address);
  vi.stubEnv('_X_AMZN_TRACE_ID', sampled());
  aws.answers.length = 0;
  built.clear();
  // Forgets the clients built so far: each test gets fresh ones, built from its environment.
  container.configureClients((client) => void built.set(client.constructor.name, client));
});
afterEach(() => {
  vi.unstubAllEnvs();
});

describe('X-Ray subsegments of the functions’ SDK calls', () => {
  it('sends one subsegment per DynamoDB call of the store, under the invocation’s trace and parent', async () => {
    const since = daemon.documents.length;
    await expect(container.store().records.get(HANDLE)).resolves.toBeUndefined();
    const [subsegment] = await daemon.received(1, since);
    expect(daemon.headers.at(-1)).toBe('{"format":"json","version":1}');
    expect(subsegment).toMatchObject({
      type: 'subsegment',
      trace_id: TRACE_ID,
      parent_id: PARENT_ID,
      name: 'DynamoDB',
      namespace: 'aws',
      aws: { operation: 'GetItem', region: 'us-east-1', table_name: db.tableName, retries: 0 },
      http: { response: { status: 200 } },
    });
    expect(subsegment?.id).toMatch(/^[0-9a-f]{16}$/);
    expect(subsegment?.aws.request_id).toEqual(expect.any(String));
    expect(subsegment?.end_time).toBeGreaterThanOrEqual(subsegment?.start_time ?? Number.POSITIVE_INFINITY);
    expect(subsegment?.error ?? subsegment?.fault ?? subsegment?.throttle).toBeUndefined();
  });

  it('marks a call DynamoDB refuses as an error, with its exception, and still fails the call', async () => {
    vi.stubEnv('TXS_TABLE_NAME', 'no-such-table');
    const since = daemon.documents.length;
    await expect(container.store().records.get(HANDLE)).rejects.toThrow();
    const [subsegment] = await daemon.received(1, since);
    expect(subsegment).toMatchObject({
      name: 'DynamoDB',
      aws: { operation: 'GetItem', table_name: 'no-such-table' },
      http: { response: { status: 400 } },
      error: true,
      cause: { exceptions: [{ type: 'ResourceNotFoundException', remote: true }] },
    });
    expect(subsegment?.fault).toBeUndefined();
  });

  it('traces the Batch, SageMaker and CloudWatch Logs clients of the schedulers, with retries and faults', async () => {
    const { runner: runnerFor } = await import('../../../functions/schedulers/table.js');
    const runner = await runnerFor();
    const batchScheduler = runner.scheduler('aws_batch');
    runner.scheduler('aws_sagemaker');
    const batch = built.get('BatchClient') as BatchClient;
    const sageMaker = built.get('SageMakerClient') as SageMakerClient;
    // The Logs client is built on the first log read (what reading a log calls), and registered as created.
    const logs = await (batchScheduler as unknown as { logs(): Promise<CloudWatchLogsClient> }).logs();
    expect(built.get('CloudWatchLogsClient')).toBe(logs);
    const since = daemon.documents.length;

    const unavailable = { status: 503, body: { message: 'try again' } };
    aws.answers.push(unavailable, unavailable, { status: 200, body: { jobSummaryList: [] } });
    await batch.send(new ListJobsCommand({ jobQueue: 'q' }));
    aws.answers.push(unavailable, unavailable, unavailable);
    await expect(
      sageMaker.send(new DescribeTrainingJobCommand({ TrainingJobName: 't-1' })),
    ).rejects.toThrow();
    aws.answers.push({ status: 200, body: { events: [] } });
    await logs.send(new GetLogEventsCommand({ logGroupName: '/aws/batch/job', logStreamName: 's' }));

    const [listJobs, describe, getLogEvents] = await daemon.received(3, since);
    expect(listJobs).toMatchObject({
      name: 'Batch',
      aws: { operation: 'ListJobs', job_queue: 'q', retries: 2 },
      http: { response: { status: 200 } },
    });
    expect(listJobs?.fault).toBeUndefined();
    expect(describe).toMatchObject({
      name: 'SageMaker',
      aws: { operation: 'DescribeTrainingJob', training_job_name: 't-1', retries: 2 },
      http: { response: { status: 503 } },
      fault: true,
    });
    expect(describe?.error).toBeUndefined();
    expect(getLogEvents).toMatchObject({
      name: 'CloudWatch Logs',
      aws: { operation: 'GetLogEvents', log_group_name: '/aws/batch/job' },
    });
    for (const client of [batch, sageMaker, logs]) {
      expect(client.middlewareStack.identify().join(' ')).toContain(XRAY_MIDDLEWARE_NAME);
    }
  });

  it('traces the publisher’s EventBridge calls', async () => {
    const since = daemon.documents.length;
    aws.answers.push({ status: 200, body: { FailedEntryCount: 0, Entries: [{ EventId: 'e-1' }] } });
    const putEvents = eventBridgePutEvents();
    await putEvents([
      {
        EventBusName: 'txs-events',
        Source: 'torchx-serverless',
        DetailType: 'AppState Change',
        Detail: '{}',
        Resources: [],
      },
    ]);
    const [subsegment] = await daemon.received(1, since);
    expect(subsegment).toMatchObject({ name: 'EventBridge', aws: { operation: 'PutEvents' } });
  });

  it('flags a throttled call as a throttled error', async () => {
    const batch = traceSdkCalls(new BatchClient({ maxAttempts: 1 }));
    aws.answers.push({
      status: 429,
      body: { message: 'Too Many Requests' },
      headers: { 'x-amzn-errortype': 'TooManyRequestsException' },
    });
    const since = daemon.documents.length;
    await expect(batch.send(new ListJobsCommand({ jobQueue: 'q' }))).rejects.toThrow();
    const [subsegment] = await daemon.received(1, since);
    expect(subsegment).toMatchObject({
      aws: { operation: 'ListJobs', retries: 0 },
      http: { response: { status: 429 } },
      error: true,
      throttle: true,
    });
  });

  it('flags a call the service refuses with a throttling error name (HTTP 400) as throttled, as the SDK classifies it', async () => {
    const batch = traceSdkCalls(new BatchClient({ maxAttempts: 1 }));
    aws.answers.push({
      status: 400,
      body: { message: 'Rate exceeded' },
      headers: { 'x-amzn-errortype': 'ThrottlingException' },
    });
    const since = daemon.documents.length;
    await expect(batch.send(new ListJobsCommand({ jobQueue: 'q' }))).rejects.toThrow();
    const [subsegment] = await daemon.received(1, since);
    expect(subsegment).toMatchObject({ http: { response: { status: 400 } }, error: true, throttle: true });
  });

  it('does not flag a client error that is not throttling as throttled', async () => {
    const batch = traceSdkCalls(new BatchClient({ maxAttempts: 1 }));
    aws.answers.push({
      status: 400,
      body: { message: 'bad queue' },
      headers: { 'x-amzn-errortype': 'ClientException' },
    });
    const since = daemon.documents.length;
    await expect(batch.send(new ListJobsCommand({ jobQueue: 'q' }))).rejects.toThrow();
    const [subsegment] = await daemon.received(1, since);
    expect(subsegment).toMatchObject({ error: true });
    expect(subsegment?.throttle).toBeUndefined();
  });

  it('sends nothing for an invocation that is not sampled, nor outside Lambda (no trace header)', async () => {
    const since = daemon.documents.length;
    vi.stubEnv('_X_AMZN_TRACE_ID', sampled('0'));
    await container.store().records.get(HANDLE);
    vi.stubEnv('_X_AMZN_TRACE_ID', undefined);
    await container.store().records.get(HANDLE);
    // Then a sampled call: the first document to arrive after the two is its own.
    vi.stubEnv('_X_AMZN_TRACE_ID', sampled());
    await container.store().queries.list({ owner: 'nobody', limit: 1 });
    const [first] = await daemon.received(1, since);
    expect(first?.aws.operation).toBe('Query');
    expect(daemon.documents.slice(since).map((d) => d.aws.operation)).toEqual(['Query']);
  });

  it('has sent the subsegment when the call returns, so a process frozen or ended right after loses none', async () => {
    // A process that makes one call and exits at once, as a Lambda sandbox may be frozen after its last call.
    const script = `
      import { BatchClient, ListJobsCommand } from '@aws-sdk/client-batch';
      import { traceSdkCalls } from './functions/shared/tracing.ts';
      await traceSdkCalls(new BatchClient({ maxAttempts: 1 })).send(new ListJobsCommand({ jobQueue: 'last' }));
      process.exit(0);`;
    const since = daemon.documents.length;
    await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: fileURLToPath(new URL('../../..', import.meta.url)),
      env: { ...process.env },
    });
    const [subsegment] = await daemon.received(1, since);
    expect(subsegment?.aws).toMatchObject({ operation: 'ListJobs', job_queue: 'last' });
  });

  it('never fails a call when the daemon cannot be reached', async () => {
    vi.stubEnv('AWS_XRAY_DAEMON_ADDRESS', 'daemon.invalid:2000');
    await expect(container.store().records.get(HANDLE)).resolves.toBeUndefined();
    vi.stubEnv('AWS_XRAY_DAEMON_ADDRESS', 'not an address');
    await expect(container.store().records.get(HANDLE)).resolves.toBeUndefined();
  });
});
