/**
 * List scaling: `GET /v1/apps` page latency (the deployed handler, in-process, against dynalite) for one
 * owner holding 1k, 10k and 100k records, and `GET /v1/apps/counts` (every record read up to its cap of
 * 10,000). Records are seeded with BatchWriteItem in the store's own item
 * format (1% RUNNING, the rest finished), each size under its own owner in one table. Measured: the first
 * page (50 newest), the page after 10 pages (nextToken), and a filtered page (state=RUNNING), after one
 * untimed warm-up of each size, in alternating rounds (size after size) so no size pays the warm-up.
 */
import { BatchWriteItemCommand, type WriteRequest } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { AppRecord } from '../lib/specs/index.js';
import { makeAppDef, makeAppHandle } from '../lib/specs/index.js';
import { appItem } from '../lib/store/app-items.js';
import type { FunctionsEnvironment } from '../test/reliability/helpers/environment.js';
import { invoke } from '../test/reliability/helpers/lambda.js';
import { median, msSince, progress, quantile, round } from './lib/stats.js';

/** The owner holding `size` records (one owner per size, all in one table). */
const ownerOf = (size: number) => `arn:aws:iam::000000000000:user/bench-list-${size}`;

/** Page latencies at one table size. */
export interface ListRow {
  records: number;
  firstPageP50Ms: number;
  firstPageP99Ms: number;
  tenthPageP50Ms: number;
  filteredP50Ms: number;
  /** Records the filtered page returned (the filter is applied after the key condition). */
  filteredReturned: number;
  /** `GET /v1/apps/counts`, median. */
  countsP50Ms: number;
  /** What it counted, and whether it read every record (false past its cap). */
  counted: number;
  countsComplete: boolean;
}

async function timed(n: number, fn: () => Promise<void>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const start = process.hrtime.bigint();
    await fn();
    out.push(msSince(start));
  }
  return out;
}

export async function listScaling(
  env: FunctionsEnvironment,
  sizes = [1_000, 10_000, 100_000],
): Promise<ListRow[]> {
  const store = env.container.store();
  const template = await store.records.create({
    handle: makeAppHandle('aws_batch', 'torchx', 'ml-gpu-queue:list-template'),
    scheduler: 'aws_batch',
    session: 'torchx',
    appId: 'ml-gpu-queue:list-template',
    nativeName: 'list-template',
    owner: 'bench-template',
    name: 'trainer',
    app: makeAppDef({ name: 'trainer' }),
    cfg: { queue: 'ml-gpu-queue' },
    state: 'SUBMITTED',
    createdAt: Date.now(),
  });
  // The store's own item builder: seeded items are exactly what `create` would write (90 days' retention).
  const retentionSeconds = 90 * 86_400;
  const rows: ListRow[] = [];
  // Recent enough that no finished record is past its retention (expired records are filtered out).
  const base = Date.now() - 86_400_000;
  for (const size of sizes) {
    const started = process.hrtime.bigint();
    const batches: Record<string, unknown>[][] = [];
    for (let i = 0; i < size; i++) {
      const jobName = `list-${size}-${i}`;
      const appId = `ml-gpu-queue:${jobName}`;
      const state = i % 100 === 0 ? 'RUNNING' : i % 3 === 0 ? 'FAILED' : 'SUCCEEDED';
      const createdAt = base + i * 10;
      const record: AppRecord = {
        ...template.record,
        handle: makeAppHandle('aws_batch', 'torchx', appId),
        appId,
        nativeName: jobName,
        owner: ownerOf(size),
        state,
        createdAt,
        updatedAt: createdAt + 50,
        lastEventTime: createdAt + 50,
      };
      if (batches.length === 0 || (batches[batches.length - 1]?.length ?? 0) >= 25) batches.push([]);
      batches[batches.length - 1]?.push(appItem(record, 1, retentionSeconds));
    }
    let written = 0;
    let next = 0;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (next < batches.length) {
          let items: WriteRequest[] = (batches[next++] ?? []).map((item) => ({
            PutRequest: { Item: marshall(item, { removeUndefinedValues: true }) },
          }));
          while (items.length > 0) {
            const out = await env.db.client.send(
              new BatchWriteItemCommand({ RequestItems: { [env.db.tableName]: items } }),
            );
            items = out.UnprocessedItems?.[env.db.tableName] ?? [];
          }
          written += 25;
          if (written % 10_000 < 25) progress(`list scaling: seeded ${written}/${size} records`);
        }
      }),
    );
    progress(`list scaling: ${size} records seeded in ${round(msSince(started) / 1000)} s`);
  }
  const call = (size: number, query: Record<string, string> = {}) =>
    invoke(env.api.List, { method: 'GET', resource: '/v1/apps', user: ownerOf(size), query });
  const samples = new Map(
    sizes.map((size) => [
      size,
      { first: [] as number[], tenth: [] as number[], filtered: [] as number[], counts: [] as number[] },
    ]),
  );
  const counted = new Map<number, { counted: number; complete: boolean }>();
  const tokens = new Map<number, string>();
  const filteredReturned = new Map<number, number>();
  for (const size of sizes) {
    // Warm-up (untimed): the first page, and the token of the page after 10 pages.
    let token = '';
    for (let p = 0; p < 10; p++)
      token = String((await call(size, token ? { nextToken: token } : {})).body.nextToken);
    tokens.set(size, token);
  }
  progress('list scaling: measuring (alternating sizes)');
  for (let r = 0; r < 10; r++) {
    for (const size of sizes) {
      const s = samples.get(size) as {
        first: number[];
        tenth: number[];
        filtered: number[];
        counts: number[];
      };
      s.first.push(
        ...(await timed(3, async () => {
          const reply = await call(size);
          if ((reply.body.apps as unknown[]).length !== 50) throw new Error('first page is not full');
        })),
      );
      s.tenth.push(
        ...(await timed(2, async () => void (await call(size, { nextToken: tokens.get(size) ?? '' })))),
      );
      s.filtered.push(
        ...(await timed(1, async () => {
          filteredReturned.set(
            size,
            ((await call(size, { state: 'RUNNING' })).body.apps as unknown[]).length,
          );
        })),
      );
      s.counts.push(
        ...(await timed(1, async () => {
          const reply = await invoke(env.api.Counts, {
            method: 'GET',
            resource: '/v1/apps/counts',
            user: ownerOf(size),
          });
          counted.set(size, reply.body as { counted: number; complete: boolean });
        })),
      );
    }
  }
  for (const size of sizes) {
    const s = samples.get(size) as { first: number[]; tenth: number[]; filtered: number[]; counts: number[] };
    rows.push({
      records: size,
      firstPageP50Ms: round(median(s.first)),
      firstPageP99Ms: round(quantile(s.first, 0.99)),
      tenthPageP50Ms: round(median(s.tenth)),
      filteredP50Ms: round(median(s.filtered)),
      filteredReturned: filteredReturned.get(size) ?? 0,
      countsP50Ms: round(median(s.counts)),
      counted: counted.get(size)?.counted ?? 0,
      countsComplete: counted.get(size)?.complete ?? false,
    });
  }
  return rows;
}
