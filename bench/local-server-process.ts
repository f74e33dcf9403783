/**
 * The local API server (`npm start`'s) in its own process for the latency benchmark, with `count` aws_batch
 * records seeded for the user `bench`. Prints `{url, appIds}` as one JSON line; runs until killed.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { store } from '../functions/shared/container.js';
import { startLocalServer } from '../lib/local/server.js';
import { makeAppDef, makeAppHandle } from '../lib/specs/index.js';

const count = Number(process.argv[2] ?? 200);
const server = await startLocalServer({
  port: 0,
  dataDir: mkdtempSync(join(tmpdir(), 'txs-bench-local-')),
  inMemory: true,
  reconcileEveryMs: 0,
  schedulers: ['local_cwd', 'aws_batch'],
});
const appIds: string[] = [];
for (let i = 0; i < count; i++) {
  const appId = `ml-gpu-queue:bench-${i}`;
  await store().create({
    handle: makeAppHandle('aws_batch', 'torchx', appId),
    scheduler: 'aws_batch',
    session: 'torchx',
    appId,
    nativeName: `bench-${i}`,
    owner: 'bench',
    name: 'bench',
    app: makeAppDef({ name: 'bench' }),
    cfg: { queue: 'ml-gpu-queue' },
    state: 'RUNNING',
    createdAt: Date.now() - i * 1000,
  });
  appIds.push(appId);
}
process.stdout.write(`${JSON.stringify({ url: server.url, appIds })}\n`);
process.on('SIGTERM', () => {
  void server.close().then(() => process.exit(0));
});
