/**
 * State-change ingestion: Batch lifecycle events (SUBMITTED … SUCCEEDED, six per app) through the deployed
 * state-change function into dynalite, interleaved across apps as EventBridge delivers them, at 1 and 16
 * concurrent deliveries (concurrent Lambda instances), with the DynamoDB reads and writes each event costs.
 * The same concurrency of bare GetItem calls gives dynalite's own ceiling on this machine.
 */
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { makeAppDef, makeAppHandle } from '../lib/specs/index.js';
import { appPartitionKey } from '../lib/store/keys.js';
import { batchLifecycle, type Envelope, T0 } from '../test/reliability/helpers/batch-events.js';
import type { FunctionsEnvironment } from '../test/reliability/helpers/environment.js';
import { msSince, progress, round } from './lib/stats.js';

/** One ingestion row. */
export interface IngestionRow {
  concurrency: number;
  apps: number;
  events: number;
  eventsPerSecond: number;
  /** CPU time of this process (the function and its SDK calls; dynalite runs in another) per event. */
  cpuMsPerEvent: number;
  readsPerEvent: number;
  writesPerEvent: number;
  /**
   * Same events with DynamoDB answered in memory (SDK serialization, signing and parsing still run): the CPU
   * our function and the SDK spend per event, without this machine's socket costs.
   */
  inMemoryEventsPerSecond: number;
  inMemoryCpuMsPerEvent: number;
  /** Bare GetItem calls per second against the same dynalite at this concurrency. */
  dynaliteGetItemsPerSecond: number;
}

const WRITES = /^(Put|Update|Delete|BatchWrite|TransactWrite)/;

async function runPool<T>(items: readonly T[], concurrency: number, fn: (item: T) => Promise<unknown>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await fn(items[next++] as T);
    }),
  );
}

export async function stateChangeIngestion(env: FunctionsEnvironment, apps = 500): Promise<IngestionRow[]> {
  const rows: IngestionRow[] = [];
  const store = env.container.store();
  for (const concurrency of [1, 16]) {
    progress(`ingestion: creating ${apps} records (concurrency ${concurrency})`);
    const lifecycles: Envelope[][] = [];
    for (let i = 0; i < apps; i++) {
      const jobName = `ingest-c${concurrency}-${i}`;
      const appId = `ml-gpu-queue:${jobName}`;
      await store.records.create({
        handle: makeAppHandle('aws_batch', 'torchx', appId),
        scheduler: 'aws_batch',
        session: 'torchx',
        appId,
        nativeName: jobName,
        owner: 'bench-ingestion',
        name: 'ingest',
        app: makeAppDef({ name: 'ingest' }),
        cfg: {},
        state: 'SUBMITTED',
        createdAt: T0,
      });
      lifecycles.push(batchLifecycle(jobName, 1, 'SUCCEEDED'));
    }
    // EventBridge order: each app's events in order, apps interleaved.
    const events: Envelope[] = [];
    for (let k = 0; k < (lifecycles[0]?.length ?? 0); k++)
      for (const l of lifecycles) events.push(l[k] as Envelope);
    progress(`ingestion: ${events.length} events at concurrency ${concurrency}`);
    env.takeDynamoCalls();
    const cpu = process.cpuUsage();
    const start = process.hrtime.bigint();
    await runPool(events, concurrency, (event) => env.handleStateChange(event));
    const elapsed = msSince(start);
    const used = process.cpuUsage(cpu);
    const calls = env.takeDynamoCalls();
    let reads = 0;
    let writes = 0;
    for (const [name, n] of Object.entries(calls)) {
      if (WRITES.test(name)) writes += n;
      else reads += n;
    }
    // The same events once more, DynamoDB answered in memory with the record each event expects.
    const raw = await env.db.client.send(
      new GetItemCommand({
        TableName: env.db.tableName,
        Key: {
          pk: {
            S: appPartitionKey(makeAppHandle('aws_batch', 'torchx', `ml-gpu-queue:ingest-c${concurrency}-0`)),
          },
          sk: { S: 'A' },
        },
      }),
    );
    const item: Record<string, unknown> = {
      ...raw.Item,
      state: { S: 'SUBMITTED' },
      stateRank: { N: '1' },
      attempt: { N: '0' },
      history: { L: [] },
    };
    env.setDynamoResponder((operation) =>
      operation === 'Query'
        ? { Items: [{ pk: item.pk, sk: item.sk }], Count: 1 }
        : operation === 'GetItem'
          ? { Item: item }
          : {},
    );
    const memCpu = process.cpuUsage();
    const memStart = process.hrtime.bigint();
    await runPool(events, concurrency, (event) => env.handleStateChange(event));
    const memElapsed = msSince(memStart);
    const memUsed = process.cpuUsage(memCpu);
    env.setDynamoResponder(undefined);
    env.takeDynamoCalls();
    const probes = Array.from({ length: 3000 }, (_, i) => i);
    const getStart = process.hrtime.bigint();
    await runPool(probes, concurrency, () =>
      env.db.itemClient.get({ TableName: env.db.tableName, Key: { pk: 'x', sk: 'A' } }),
    );
    rows.push({
      concurrency,
      apps,
      events: events.length,
      eventsPerSecond: Math.round((events.length / elapsed) * 1000),
      cpuMsPerEvent: round((used.user + used.system) / 1000 / events.length, 3),
      inMemoryEventsPerSecond: Math.round((events.length / memElapsed) * 1000),
      inMemoryCpuMsPerEvent: round((memUsed.user + memUsed.system) / 1000 / events.length, 3),
      readsPerEvent: round(reads / events.length, 2),
      writesPerEvent: round(writes / events.length, 2),
      dynaliteGetItemsPerSecond: Math.round((probes.length / msSince(getStart)) * 1000),
    });
  }
  return rows;
}
