/**
 * The local API server (`npm start`'s) in its own process for the latency benchmark. Arguments: how many
 * aws_batch records to seed for the user `bench` (default 200) and the checkout whose code to run (default this
 * one; another one for a before/after comparison). Runs it as `npm start` does (verbose: a line per request on
 * stdout). Prints `{url, appIds}` as one JSON line; answers the IPC
 * message `cpu` with the process's CPU time (`process.cpuUsage()`: every thread, µs); runs until killed.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from './bundling.js';

type Container = typeof import('../functions/shared/container.js');
type Server = typeof import('../lib/local/server.js');
type Specs = typeof import('../lib/specs/index.js');

const count = Number(process.argv[2] ?? 200);
const root = resolve(process.argv[3] ?? ROOT);
const load = <T>(path: string) => import(pathToFileURL(join(root, path)).href) as Promise<T>;
const { startLocalServer } = await load<Server>('lib/local/server.ts');
const { store } = await load<Container>('functions/shared/container.ts');
const { makeAppDef, makeAppHandle } = await load<Specs>('lib/specs/index.ts');

const server = await startLocalServer({
  port: 0,
  dataDir: mkdtempSync(join(tmpdir(), 'txs-bench-local-')),
  inMemory: true,
  reconcileEveryMs: 0,
  schedulers: ['local_cwd', 'aws_batch'],
  // As `npm start` runs it: a line per request on stdout.
  verbose: true,
});
const appIds = Array.from({ length: count }, (_, i) => `ml-gpu-queue:bench-${i}`);
const seed = async (i: number, appId: string) => {
  await store().records.create({
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
};
// 20 at a time.
for (let i = 0; i < count; i += 20)
  await Promise.all(appIds.slice(i, i + 20).map((id, j) => seed(i + j, id)));
process.on('message', (message) => {
  if (message === 'cpu') process.send?.({ cpu: process.cpuUsage() });
});
process.stdout.write(`${JSON.stringify({ url: server.url, appIds })}\n`);
process.on('SIGTERM', () => {
  void server.close().then(() => process.exit(0));
});
