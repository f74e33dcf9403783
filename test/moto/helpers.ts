/**
 * The moto suite's harness: the local server with its real AWS SDK clients pointed at moto (through
 * `AWS_ENDPOINT_URL`), its DynamoDB being moto's, and the `txs` HTTP client to drive it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type CloudWatchLogsClient,
  CreateLogStreamCommand,
  PutLogEventsCommand,
} from '@aws-sdk/client-cloudwatch-logs';
import { inject } from 'vitest';
import { TxsClient } from '../../lib/cli/client.js';
import { ApiError } from '../../lib/cli/errors.js';
import type { LocalServer } from '../../lib/local/server.js';
import { MOTO_CREDENTIALS, MOTO_QUEUE, MOTO_REGION } from './constants.js';

/** A local server on moto, and what a test needs to talk to both. */
export interface MotoHarness {
  /** moto's base URL. */
  endpoint: string;
  server: LocalServer;
  /** Options for the suite's own SDK clients (to look at what the server did in moto, or to seed logs). */
  clientConfig: {
    endpoint: string;
    region: string;
    credentials: { accessKeyId: string; secretAccessKey: string };
  };
  /** A `txs` client acting as `user` (the local server's `x-txs-user`). */
  client(user: string): TxsClient;
  close(): Promise<void>;
}

/**
 * Points every AWS SDK client this process builds from now on at moto (`AWS_ENDPOINT_URL`, region and fake
 * credentials in the environment), and returns the same settings for a client built explicitly.
 */
export function pointSdkAtMoto(): MotoHarness['clientConfig'] {
  const endpoint = inject('motoEndpoint');
  process.env.AWS_ENDPOINT_URL = endpoint;
  process.env.AWS_REGION = MOTO_REGION;
  process.env.AWS_ACCESS_KEY_ID = MOTO_CREDENTIALS.accessKeyId;
  process.env.AWS_SECRET_ACCESS_KEY = MOTO_CREDENTIALS.secretAccessKey;
  return { endpoint, region: MOTO_REGION, credentials: { ...MOTO_CREDENTIALS } };
}

/**
 * Starts the local server (aws_batch and aws_sagemaker enabled, no reconciler timer or follower) with every SDK client
 * it builds pointed at moto: `AWS_ENDPOINT_URL` for Batch, SageMaker and CloudWatch Logs, and the
 * `dynamodbEndpoint` option for the record store.
 */
export async function startServerOnMoto(): Promise<MotoHarness> {
  const clientConfig = pointSdkAtMoto();
  const { endpoint } = clientConfig;
  process.env.TXS_BATCH_QUEUES = MOTO_QUEUE;
  const dataDir = mkdtempSync(join(tmpdir(), 'txs-moto-'));
  const { startLocalServer } = await import('../../lib/local/server.js');
  const server = await startLocalServer({
    port: 0,
    dataDir,
    inMemory: true,
    reconcileEveryMs: 0,
    // No follower either: the suites share moto's table and check what each call does by itself (a record
    // stays SUBMITTED until a refresh); the follower is tested at the SDK wire (test/integration/local).
    followEveryMs: 0,
    schedulers: ['aws_batch', 'aws_sagemaker'],
    dynamodbEndpoint: endpoint,
  });
  return {
    endpoint,
    server,
    clientConfig,
    client: (user) => new TxsClient({ endpoint: server.url, headers: { 'x-txs-user': user }, maxRetries: 0 }),
    async close() {
      await server.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The API error a call fails with (its HTTP status, `error.code` and field paths), or a failed test. */
export async function apiErrorOf(call: Promise<unknown>): Promise<ApiError> {
  try {
    await call;
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('expected the API to answer with an error');
}

/** Creates the log stream `stream` in `group` and writes `lines` to it, one event each, 1 ms apart from `start`. */
export async function putLogLines(
  logs: CloudWatchLogsClient,
  group: string,
  stream: string,
  lines: readonly string[],
  start = Date.now() - 60_000,
): Promise<void> {
  await logs.send(new CreateLogStreamCommand({ logGroupName: group, logStreamName: stream }));
  await logs.send(
    new PutLogEventsCommand({
      logGroupName: group,
      logStreamName: stream,
      logEvents: lines.map((message, i) => ({ message, timestamp: start + i })),
    }),
  );
}
