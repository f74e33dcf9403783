/**
 * A loopback AWS endpoint for the cold-init bench that answers every request a function's first invocation
 * sends with a valid response shape, so each route builds every client it needs and sends every request:
 * DynamoDB (JSON 1.0, `x-amz-target: DynamoDB_20120810.*`), Batch (REST-JSON, `POST /v1/<action>`),
 * SageMaker (`SageMaker.*`), CloudWatch Logs (`Logs_20140328.*`) and S3 (`HEAD /<bucket>/<key>`: path style,
 * as the SDK addresses an IP endpoint). `GetItem` and `Query` return the one seeded app record (in the
 * store's own item format), `HeadObject` a fresh workspace archive of the seeded size and file count;
 * everything else answers as an empty success.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { marshall } from '@aws-sdk/util-dynamodb';
import { FILE_COUNT_METADATA } from '../../functions/workspaces/bucket.js';
import type { AppRecord } from '../../lib/specs/index.js';
import { appItem } from '../../lib/store/app-items.js';
import { appPartitionKey } from '../../lib/store/keys.js';

/** A running stub: its URL, the requests it answered by `service.action`, and close. */
export interface AwsStub {
  url: string;
  calls: Map<string, number>;
  close(): Promise<void>;
}

const JOB_ID = '5f0d9a3e-2b7c-4e1a-9c4d-8a6b2f1e7d30';
const ACCOUNT = '123456789012';

/** A described multi-node job with one `trainer` node (`id` = `<jobId>#0` describes the node itself). */
function batchJob(id: string, record: AppRecord, queue: string): Record<string, unknown> {
  const now = Date.now();
  const container = {
    image: 'ghcr.io/pytorch/torchx:0.8',
    command: ['python', 'train.py'],
    environment: [{ name: 'TORCHX_ROLE_NAME', value: 'trainer' }],
    resourceRequirements: [],
  };
  const node = id.includes('#');
  return {
    jobArn: `arn:aws:batch:us-east-1:${ACCOUNT}:job/${id}`,
    jobName: record.nativeName,
    jobId: id,
    jobQueue: `arn:aws:batch:us-east-1:${ACCOUNT}:job-queue/${queue}`,
    status: 'RUNNING',
    attempts: [],
    createdAt: now - 60_000,
    startedAt: now - 30_000,
    dependsOn: [],
    jobDefinition: `arn:aws:batch:us-east-1:${ACCOUNT}:job-definition/${record.nativeName}:1`,
    parameters: {},
    tags: {},
    ...(node
      ? {
          nodeDetails: { nodeIndex: 0, isMainNode: true },
          container: { ...container, logStreamName: `${record.nativeName}/default/${id.replace('#', '-')}` },
        }
      : {
          nodeProperties: {
            numNodes: 1,
            mainNode: 0,
            nodeRangeProperties: [{ targetNodes: '0:0', container }],
          },
        }),
  };
}

function batchAnswer(
  action: string,
  body: Record<string, unknown>,
  record: AppRecord,
  queue: string,
): unknown {
  switch (action) {
    case 'registerjobdefinition': {
      const name = String(body.jobDefinitionName ?? 'def');
      return {
        jobDefinitionName: name,
        jobDefinitionArn: `arn:aws:batch:us-east-1:${ACCOUNT}:job-definition/${name}:1`,
        revision: 1,
      };
    }
    case 'describejobdefinitions':
      return { jobDefinitions: [] };
    case 'submitjob':
      return {
        jobArn: `arn:aws:batch:us-east-1:${ACCOUNT}:job/${JOB_ID}`,
        jobName: body.jobName,
        jobId: JOB_ID,
      };
    case 'listjobs':
      return {
        jobSummaryList: [
          { jobId: JOB_ID, jobName: record.nativeName, status: 'RUNNING', createdAt: Date.now() - 60_000 },
        ],
      };
    case 'describejobs':
      return { jobs: ((body.jobs as string[] | undefined) ?? []).map((id) => batchJob(id, record, queue)) };
    default:
      return {};
  }
}

function jsonTargetAnswer(
  target: string,
  body: Record<string, unknown>,
  item: Record<string, unknown>,
): unknown {
  const [service = '', action = ''] = target.split('.');
  if (service.startsWith('DynamoDB')) {
    const key = (body.Key as { pk?: { S?: string } } | undefined)?.pk?.S;
    switch (action) {
      case 'GetItem':
        return key === (item.pk as { S: string }).S ? { Item: item } : {};
      case 'Query':
        return { Items: [item], Count: 1, ScannedCount: 1 };
      case 'UpdateItem':
      case 'PutItem':
      case 'DeleteItem':
        return body.ReturnValues === 'ALL_NEW' ? { Attributes: item } : {};
      default:
        return {};
    }
  }
  if (service.startsWith('Logs')) {
    return { events: [], nextForwardToken: 'f/0', nextBackwardToken: 'b/0' };
  }
  if (service === 'AWSEvents' && action === 'PutEvents') {
    const entries = (body.Entries as unknown[] | undefined) ?? [];
    return { FailedEntryCount: 0, Entries: entries.map((_, i) => ({ EventId: `bench-${i}` })) };
  }
  if (service === 'SageMaker' && action === 'CreateTrainingJob') {
    return { TrainingJobArn: `arn:aws:sagemaker:us-east-1:${ACCOUNT}:training-job/bench` };
  }
  return {};
}

/**
 * Starts the stub on 127.0.0.1 (random port) holding `record` as the one app (on Batch queue `queue`), and
 * `archive` as every workspace archive its bucket holds.
 */
export async function startAwsStub(
  record: AppRecord,
  queue: string,
  archive: { size: number; fileCount: number },
): Promise<AwsStub> {
  const calls = new Map<string, number>();
  const item = marshall(appItem(record, 1, 86_400), { removeUndefinedValues: true });
  const pk = appPartitionKey(record.handle);
  if ((item.pk as { S?: string } | undefined)?.S !== pk) throw new Error('bench stub: unexpected key layout');
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const body = (text ? JSON.parse(text) : {}) as Record<string, unknown>;
      if (req.method === 'HEAD') {
        calls.set('S3.HeadObject', (calls.get('S3.HeadObject') ?? 0) + 1);
        res.writeHead(200, {
          'content-length': archive.size,
          'last-modified': new Date().toUTCString(),
          etag: '"bench"',
          [`x-amz-meta-${FILE_COUNT_METADATA}`]: String(archive.fileCount),
          'x-amz-request-id': 'bench',
        });
        res.end();
        return;
      }
      const target = req.headers['x-amz-target'];
      let answer: unknown;
      let name: string;
      let contentType = 'application/json';
      if (typeof target === 'string') {
        name = target;
        answer = jsonTargetAnswer(target, body, item);
        contentType = target.startsWith('DynamoDB')
          ? 'application/x-amz-json-1.0'
          : 'application/x-amz-json-1.1';
      } else {
        const action = (req.url ?? '').split('?')[0]?.split('/').pop()?.toLowerCase() ?? '';
        name = `Batch.${action}`;
        answer = batchAnswer(action, body, record, queue);
      }
      calls.set(name, (calls.get(name) ?? 0) + 1);
      const payload = JSON.stringify(answer);
      res.writeHead(200, {
        'content-type': contentType,
        'content-length': Buffer.byteLength(payload),
        'x-amzn-requestid': 'bench',
      });
      res.end(payload);
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    close: () =>
      new Promise((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}
