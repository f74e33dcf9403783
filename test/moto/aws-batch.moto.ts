/**
 * aws_batch end to end over the real AWS wire: the local server's handlers, its real Batch, CloudWatch Logs
 * and DynamoDB SDK clients, and moto answering them (see global-setup.ts). Where moto differs from AWS the
 * test says so, asserts what moto does, and names the unit test that covers the AWS behaviour.
 */
import {
  BatchClient,
  DescribeJobDefinitionsCommand,
  DescribeJobsCommand,
  type JobDetail,
  ListJobsCommand,
} from '@aws-sdk/client-batch';
import { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import { DescribeTableCommand, DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunRequestBody } from '../../lib/cli/api-types.js';
import { LOCAL_TABLE_NAME } from '../../lib/local/server.js';
import { readLogStreams } from '../../lib/schedulers/cloudwatch-logs.js';
import { makeAppDef, makeResource, makeRole } from '../../lib/specs/index.js';
import { createTableInput } from '../../lib/store/index.js';
import { MOTO_LOG_GROUPS, MOTO_QUEUE } from './constants.js';
import { apiErrorOf, type MotoHarness, putLogLines, startServerOnMoto } from './helpers.js';

const BATCH_LOG_GROUP = MOTO_LOG_GROUPS[0];

let moto: MotoHarness;
let batch: BatchClient;
let logs: CloudWatchLogsClient;

beforeAll(async () => {
  moto = await startServerOnMoto();
  batch = new BatchClient(moto.clientConfig);
  logs = new CloudWatchLogsClient(moto.clientConfig);
});
afterAll(async () => {
  batch?.destroy();
  logs?.destroy();
  await moto?.close();
});

/** A 2-node DDP app on the suite's queue. */
const ddp: RunRequestBody = {
  scheduler: 'aws_batch',
  cfg: { queue: MOTO_QUEUE },
  component: 'dist.ddp',
  args: ['-j', '2x1', '--script', 'train.py'],
};

/** The job moto has under the app id's name (ListJobs JOB_NAME filter, then DescribeJobs). */
async function jobInMoto(appId: string): Promise<JobDetail | undefined> {
  const jobName = appId.slice(appId.lastIndexOf(':') + 1);
  const listed = await batch.send(
    new ListJobsCommand({ jobQueue: MOTO_QUEUE, filters: [{ name: 'JOB_NAME', values: [jobName] }] }),
  );
  const jobId = listed.jobSummaryList?.[0]?.jobId;
  if (jobId === undefined) return undefined;
  return (await batch.send(new DescribeJobsCommand({ jobs: [jobId] }))).jobs?.[0];
}

function putLines(stream: string, lines: string[]): Promise<void> {
  return putLogLines(logs, BATCH_LOG_GROUP, stream, lines);
}

describe('local server on moto', () => {
  // Regression: the server looked for its table with region 'local' while its store used AWS_REGION; against
  // a DynamoDB that keeps tables per region (moto answers an unknown region with a 500) it did not start.
  it("uses the record table of lib/store/table.ts in its clients' region", async () => {
    const dynamo = new DynamoDBClient(moto.clientConfig);
    try {
      expect((await dynamo.send(new ListTablesCommand({}))).TableNames).toEqual([LOCAL_TABLE_NAME]);
      const { Table } = await dynamo.send(new DescribeTableCommand({ TableName: LOCAL_TABLE_NAME }));
      const expected = createTableInput(LOCAL_TABLE_NAME);
      expect(Table?.KeySchema).toEqual(expected.KeySchema);
      expect(Table?.GlobalSecondaryIndexes?.map((i) => i.IndexName).sort()).toEqual(
        expected.GlobalSecondaryIndexes?.map((i) => i.IndexName).sort(),
      );
    } finally {
      dynamo.destroy();
    }
  });
});

describe('aws_batch over the AWS wire (moto)', () => {
  it('dry-runs a 2-node DDP app into a multi-node job definition without a Batch call or a record', async () => {
    const client = moto.client('batch-dryrun');
    const dryrun = await client.dryrun(ddp);
    const request = dryrun.request as {
      registerJobDefinition: {
        jobDefinitionName: string;
        type: string;
        nodeProperties: { numNodes: number };
      };
      submitJob: { jobQueue: string; jobName: string };
    };
    expect(request.registerJobDefinition).toMatchObject({
      type: 'multinode',
      nodeProperties: { numNodes: 2 },
    });
    expect(request.submitJob.jobQueue).toBe(MOTO_QUEUE);
    const definitions = await batch.send(
      new DescribeJobDefinitionsCommand({
        jobDefinitionName: request.registerJobDefinition.jobDefinitionName,
      }),
    );
    expect(definitions.jobDefinitions).toEqual([]);
    expect(await jobInMoto(`${MOTO_QUEUE}:${request.submitJob.jobName}`)).toBeUndefined();
    expect((await client.listApps()).apps).toEqual([]);
  });

  it('runs the app as one multi-node job, as sent, and refreshes its record to SUCCEEDED', async () => {
    const client = moto.client('batch-run');
    const run = await client.run(ddp, 'batch-run-1');
    expect(run).toMatchObject({ scheduler: 'aws_batch', state: 'SUBMITTED' });
    expect(run.appId).toMatch(new RegExp(`^${MOTO_QUEUE}:train-[a-z0-9]+$`));

    // What moto received is what the API's dry run describes: a multinode definition with the role's node range.
    const job = await jobInMoto(run.appId);
    expect(job).toBeDefined();
    expect(job?.tags).toMatchObject({ 'torchx.pytorch.org/version': expect.any(String) });
    expect(job?.nodeProperties).toMatchObject({
      numNodes: 2,
      mainNode: 0,
      nodeRangeProperties: [
        {
          targetNodes: '0:1',
          container: {
            image: 'ghcr.io/pytorch/torchx:0.7.0',
            command: ['bash', '-c', expect.stringContaining('--nnodes 2')],
            environment: expect.arrayContaining([{ name: 'TORCHX_ROLE_NAME', value: 'train' }]),
          },
        },
      ],
    });
    const [definition] =
      (await batch.send(new DescribeJobDefinitionsCommand({ jobDefinitions: [job?.jobDefinition ?? ''] })))
        .jobDefinitions ?? [];
    expect(definition).toMatchObject({ type: 'multinode', status: 'ACTIVE' });

    // moto without Docker finishes every job inside SubmitJob: the first refresh already sees SUCCEEDED.
    const detail = await client.getApp(run.handle, { refresh: true });
    expect(detail.status.state).toBe('SUCCEEDED');
    expect(detail.history?.map((h) => h.to)).toEqual(['SUBMITTED', 'SUCCEEDED']);
    expect(detail.status.uiUrl).toContain(job?.jobId);
    // moto gap: DescribeJobs knows no node jobs (`<jobId>#<n>`), so the replicas' states come from the
    // parent job and carry no hostname or exit code. Per-node describe is covered by
    // test/unit/aws-batch/scheduler.test.ts › 'describes a running job with roles and per-replica statuses
    // from its node jobs'.
    const nodes = await batch.send(new DescribeJobsCommand({ jobs: [`${job?.jobId}#0`, `${job?.jobId}#1`] }));
    expect(nodes.jobs).toEqual([]);
    expect(detail.status.roles).toEqual([
      {
        role: 'train',
        replicas: [0, 1].map((id) => expect.objectContaining({ id, role: 'train', state: 'SUCCEEDED' })),
      },
    ]);
    // The record, read back without refresh from moto's DynamoDB, is the refreshed one.
    expect((await client.getApp(run.handle)).status.state).toBe('SUCCEEDED');
  });

  it("reads a node's log from CloudWatch Logs over the wire, and pages across attempt streams", async () => {
    const client = moto.client('batch-logs');
    const run = await client.run(ddp, 'batch-logs-1');
    const job = await jobInMoto(run.appId);
    const parentStream = job?.container?.logStreamName ?? '';
    // moto names the (parent) job's stream like Batch: <definition name>/default/<job id>.
    expect(parentStream).toMatch(/^train-[a-z0-9]+\/default\/[0-9a-f-]+$/);
    await putLines(parentStream, ['parent line']);

    // moto gap: without node jobs (`<jobId>#0`) there is no node stream to read, so the API answers an
    // empty page that is caught up (the job stopped less than 30 s ago, so it keeps a token for late lines).
    // Reading a node's stream across pages is covered by test/unit/aws-batch/logs.test.ts › 'reads the node
    // stream of the role's replica from the head, in the role's log group' and › 'moves on to a retried
    // attempt's stream once the current one is read'.
    const page = await client.logs(run.handle, { limit: 2 });
    expect(page.lines).toEqual([]);
    expect(page.caughtUp).toBe(true);
    expect(page.nextToken).toEqual(expect.any(String));
    const again = await client.logs(run.handle, { limit: 2, nextToken: page.nextToken });
    expect(again.lines).toEqual([]);

    // The CloudWatch paging the scheduler does for a node (lib/schedulers/cloudwatch-logs.ts) against moto's
    // GetLogEvents: two attempts' streams, pages of 2 lines, forward tokens, the end of a stream seen when
    // the token comes back unchanged.
    const attempts = [`${parentStream}-attempt-1`, `${parentStream}-attempt-2`];
    const written = [
      ['a1 line 1', 'a1 line 2', 'a1 line 3'],
      ['a2 line 1', 'a2 line 2', 'a2 line 3', 'a2 line 4'],
    ];
    await putLines(attempts[0] as string, written[0] as string[]);
    await putLines(attempts[1] as string, written[1] as string[]);
    const read: string[] = [];
    let cursor: { stream?: string; token?: string } | undefined;
    let pages = 0;
    for (;;) {
      const next = await readLogStreams({
        client: logs,
        logGroup: BATCH_LOG_GROUP,
        streams: attempts,
        cursor,
        limit: 2,
        finished: true,
      });
      pages += 1;
      expect(next.lines.length).toBeLessThanOrEqual(2);
      read.push(...next.lines);
      if (next.complete) break;
      cursor = next.cursor;
      expect(pages).toBeLessThan(20);
    }
    expect(read).toEqual(written.flat());
    expect(pages).toBeGreaterThanOrEqual(4);
  });

  it('pages the list of apps through the byOwner index of DynamoDB, newest first', async () => {
    const client = moto.client('batch-list');
    const handles: string[] = [];
    for (let i = 0; i < 5; i++) {
      const body: RunRequestBody = {
        scheduler: 'aws_batch',
        cfg: { queue: MOTO_QUEUE },
        component: 'utils.echo',
        args: ['--msg', `list ${i}`],
      };
      handles.push((await client.run(body, `batch-list-${i}`)).handle);
    }
    const seen: string[] = [];
    const sizes: number[] = [];
    let nextToken: string | undefined;
    do {
      const page = await client.listApps({ limit: 2, ...(nextToken ? { nextToken } : {}) });
      sizes.push(page.apps.length);
      seen.push(...page.apps.map((a) => a.handle));
      nextToken = page.nextToken;
    } while (nextToken !== undefined && sizes.length < 10);
    expect(seen).toEqual([...handles].reverse());
    expect(sizes.slice(0, 2)).toEqual([2, 2]);
    expect(seen).toHaveLength(5);
  });

  it('returns the same handle for a retried run with the same Idempotency-Key and submits one job', async () => {
    const client = moto.client('batch-idem');
    const first = await client.run(ddp, 'batch-idem-1');
    const second = await client.run(ddp, 'batch-idem-1');
    expect(second.handle).toBe(first.handle);
    expect((await client.listApps()).apps).toHaveLength(1);
    const other = await apiErrorOf(
      client.run({ ...ddp, args: ['-j', '1x1', '--script', 'x.py'] }, 'batch-idem-1'),
    );
    expect(other).toMatchObject({ status: 422, apiCode: 'IdempotencyConflict' });
  });

  it('shares one job definition between runs of an app without ${app_id}, and registers it anew once deleted', async () => {
    const client = moto.client('batch-shared');
    const body: RunRequestBody = {
      scheduler: 'aws_batch',
      cfg: { queue: MOTO_QUEUE },
      app: makeAppDef({
        name: 'shared',
        roles: [
          makeRole({
            name: 'worker',
            image: 'public.ecr.aws/docker/library/busybox:latest',
            entrypoint: 'echo',
            args: ['shared definition'],
            resource: makeResource({ cpu: 1, gpu: 0, memMB: 512 }),
          }),
        ],
      }),
    };
    const definitionOf = async (appId: string) => (await jobInMoto(appId))?.jobDefinition ?? '';
    const first = await client.run(body, 'batch-shared-1');
    const second = await client.run(body, 'batch-shared-2');
    const shared = await definitionOf(first.appId);
    // Named by content hash, not by job: the second run reused the revision the scheduler remembered.
    expect(shared).toMatch(/:job-definition\/shared-[0-9a-f]+:1$/);
    expect(await definitionOf(second.appId)).toBe(shared);

    // Deleting an app deregisters the revision it ran with (and the scheduler forgets it); the next run registers
    // revision 2.
    await client.delete(first.handle);
    const third = await client.run(body, 'batch-shared-3');
    expect(await definitionOf(third.appId)).toBe(shared.replace(/:1$/, ':2'));
    const name = shared.slice(shared.lastIndexOf('/') + 1, shared.lastIndexOf(':'));
    const revisions = await batch.send(new DescribeJobDefinitionsCommand({ jobDefinitionName: name }));
    expect((revisions.jobDefinitions ?? []).map((d) => [d.revision, d.status]).sort()).toEqual([
      [1, 'INACTIVE'],
      [2, 'ACTIVE'],
    ]);
  });

  it('cancels a finished job as a no-op, and deletes it by deregistering its job definition', async () => {
    const client = moto.client('batch-cancel');
    const run = await client.run(ddp, 'batch-cancel-1');
    // moto gap: the job finished inside SubmitJob, so cancel meets a SUCCEEDED job and sends neither CancelJob
    // nor TerminateJob (moto would record the reason even on a finished job). Cancelling live jobs is covered
    // by test/unit/aws-batch/scheduler.test.ts › cancel › 'terminates a running job with the prefixed reason'
    // and › 'cancels a job that has not started and leaves it at that when it stays unstarted'.
    // The answer is the record (still SUBMITTED: no event reaches a local server from Batch) with the cancel
    // request noted; the refresh then finds the job finished before the cancel, so not CANCELLED.
    const cancelled = await client.cancel(run.handle);
    expect(cancelled).toMatchObject({ handle: run.handle, state: 'SUBMITTED' });
    const job = await jobInMoto(run.appId);
    expect(job?.status).toBe('SUCCEEDED');
    expect(job?.statusReason).toBeUndefined();
    const refreshed = await client.getApp(run.handle, { refresh: true });
    expect(refreshed.status.state).toBe('SUCCEEDED');
    expect(refreshed.cancelRequestedAt).toEqual(expect.any(String));

    const deleted = await client.delete(run.handle);
    expect(deleted).toMatchObject({ handle: run.handle, state: 'SUCCEEDED' });
    const [definition] =
      (await batch.send(new DescribeJobDefinitionsCommand({ jobDefinitions: [job?.jobDefinition ?? ''] })))
        .jobDefinitions ?? [];
    expect(definition?.status).toBe('INACTIVE');
    // The record is kept, and a second delete (its definition already inactive) still succeeds.
    expect((await client.getApp(run.handle)).status.state).toBe('SUCCEEDED');
    expect(await client.delete(run.handle)).toMatchObject({ state: 'SUCCEEDED' });
  });

  it("rejects an unknown queue with moto's ClientException as a 400 naming cfg.queue, and keeps the failure", async () => {
    const client = moto.client('batch-bad-queue');
    const error = await apiErrorOf(
      client.run({ ...ddp, cfg: { queue: 'txs-moto-no-such-queue' } }, 'batch-bad-queue-1'),
    );
    expect(error.status).toBe(400);
    expect(error.apiCode).toBe('ValidationFailed');
    expect(error.issues.map((i) => i.path)).toEqual(['cfg.queue']);
    expect(error.message).toContain('Job queue txs-moto-no-such-queue does not exist');
    // Only SubmitJob can tell that a queue does not exist, so the record was written before: it is kept
    // FAILED with the reason (nothing lost), and no job exists.
    const { apps } = await client.listApps();
    expect(apps).toEqual([
      expect.objectContaining({
        state: 'FAILED',
        reason: expect.stringContaining('Job queue txs-moto-no-such-queue does not exist'),
      }),
    ]);
  });

  it('settles a record left SUBMITTED through the reconciler (byActive index, ListJobs and DescribeJobs)', async () => {
    const client = moto.client('batch-reconcile');
    const run = await client.run(ddp, 'batch-reconcile-1');
    expect((await client.getApp(run.handle)).status.state).toBe('SUBMITTED');
    // The reconciler's pass over aws_batch only: the SageMaker suite runs in parallel on the same table, and
    // a pass over its records could settle them between its own steps.
    const { runner } = await import('../../functions/schedulers/table.js');
    const report = await (await runner('aws_batch')).reconcile('aws_batch');
    expect(report.errors).toBe(0);
    expect(report.checked).toBeGreaterThanOrEqual(1);
    expect((await client.getApp(run.handle)).status.state).toBe('SUCCEEDED');
  });

  it("lists the queue's torchx jobs from Batch itself (ListJobs with AFTER_CREATED_AT)", async () => {
    const client = moto.client('batch-native-list');
    const run = await client.run(ddp, 'batch-native-list-1');
    const { runner } = await import('../../functions/schedulers/table.js');
    const apps = await (await runner('aws_batch')).listFromScheduler('aws_batch');
    expect(apps).toContainEqual({
      appId: run.appId,
      appHandle: run.handle,
      state: 'SUCCEEDED',
      name: 'train',
    });
    expect(apps.every((a) => a.appId.startsWith(`${MOTO_QUEUE}:`))).toBe(true);

    // moto gap: ListJobs has no pagination (maxResults is ignored, no nextToken) and keeps every job for an
    // AFTER_CREATED_AT filter, even one in the future. Paging and the window are covered by
    // test/unit/aws-batch/scheduler.test.ts › list › 'lists torchx jobs created in the window on the
    // configured queues'.
    const future = String(Date.now() + 86_400_000);
    const page = await batch.send(
      new ListJobsCommand({
        jobQueue: MOTO_QUEUE,
        maxResults: 1,
        filters: [{ name: 'AFTER_CREATED_AT', values: [future] }],
      }),
    );
    expect(page.nextToken).toBeUndefined();
    expect(page.jobSummaryList?.length).toBeGreaterThan(1);
  });
});
