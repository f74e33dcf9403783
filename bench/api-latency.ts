/**
 * Local API latency: the local server (`npm start`: the same handlers over HTTP, dynalite in-process) runs in
 * its own process, as `npm start` runs it (a log line per request; Powertools at WARN), with 3,955 seeded
 * records; closed-loop clients in this process (`node:http`,
 * bench/lib/http-load.ts) send status, list (50 records) and dryrun requests at 1, 10 and 100 concurrent
 * clients over keep-alive connections, and status also over a new connection per request (as `curl` sends
 * it). Status reads 200 apps over and over (what polling clients do), and separately each app once ("first
 * read": for the local server's record cache, a miss every time).
 *
 * Each operation is warmed up first (300 unmeasured requests from 10 clients: the JIT, the handler's first
 * load, the record cache), and each level too (5 unmeasured requests per client, which opens and admits its
 * connections). Reported: p50 and p99 of the round trips, requests per second, and the CPU time the server
 * and the clients spent per request (server: `process.cpuUsage()` of its process over IPC, every thread), with
 * the load average when the level started.
 *
 * With `compareRef`, the same run also starts the server of that git revision (extracted to a temporary
 * directory, sharing this checkout's node_modules; or of that directory, used as it is) and alternates the two servers round by round (ABBA), so
 * both see the same machine load; the rows pool every round.
 */
import { type ChildProcess, execSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './bundling.js';
import { type Connections, closedLoop, type LoadRequest } from './lib/http-load.js';
import { progress, quantile, round } from './lib/stats.js';

/** Latency of one operation at one concurrency, for one server. */
export interface LatencyRow {
  /** `this checkout`, or the git revision compared against. */
  server: string;
  operation: string;
  connections: Connections;
  clients: number;
  requests: number;
  p50Ms: number;
  p99Ms: number;
  perSecond: number;
  serverCpuMsPerRequest: number;
  clientCpuMsPerRequest: number;
  /** 1-minute load average when the row's runs started (mean over rounds). */
  loadAverage: number;
  /** Requests answered with another status than 200 (e.g. 503 when the store failed). */
  errors: number;
}

/** Options of {@link apiLatency}. */
export interface ApiLatencyOptions {
  levels: number[];
  /** Rounds per server (default 1; 2 when comparing). */
  rounds?: number;
  /** A git revision (or a checkout's directory) whose server runs alternately with this checkout's. */
  compareRef?: string;
}

const DRYRUN = JSON.stringify({
  scheduler: 'aws_batch',
  component: 'dist.ddp',
  args: ['-j', '2x8', '--script', 'train.py'],
  cfg: { queue: 'ml-gpu-queue' },
});

const HEADERS = { 'x-txs-user': 'bench', 'content-type': 'application/json' };

interface Operation {
  name: string;
  connections: Connections;
  request: (appIds: string[], i: number) => LoadRequest;
  /** Measured requests at a concurrency (about 3 s or more of the slowest server's time each). */
  requests: (clients: number) => number;
  /** Warm up with 300 requests first (default true). */
  warmUp?: boolean;
}

/** Apps the repeated status requests read (the first {@link WATCHED} seeded ones, over and over). */
const WATCHED = 200;
/** First reads per concurrency level. */
const FIRST_READS = 1_000;
/**
 * Seeded apps: the watched ones, then enough for every first-read request of a server process (measured and
 * the levels' warm-ups) to read a new app.
 */
const SEEDED = WATCHED + 3 * FIRST_READS + 5 * (1 + 10 + 100) + 200;

const statusOf = (appId: string | undefined): LoadRequest => ({
  method: 'GET',
  path: `/v1/apps/aws_batch/${encodeURIComponent(appId ?? '')}`,
  headers: HEADERS,
});

const status = (appIds: string[], i: number): LoadRequest => statusOf(appIds[i % WATCHED]);

/** A status request for an app no request of this server process has read yet (a record-cache miss). */
function firstReads(): Operation['request'] {
  let next = WATCHED;
  return (appIds) => {
    if (next >= appIds.length) throw new Error(`every one of the ${appIds.length} seeded apps was read`);
    return statusOf(appIds[next++]);
  };
}

const operations = (): Operation[] => [
  { name: 'status', connections: 'keep-alive', request: status, requests: () => 3_000 },
  {
    name: 'status, first read',
    connections: 'keep-alive',
    request: firstReads(),
    requests: () => FIRST_READS,
    warmUp: false,
  },
  { name: 'status', connections: 'new per request', request: status, requests: () => 1_000 },
  {
    name: 'list',
    connections: 'keep-alive',
    request: () => ({ method: 'GET', path: '/v1/apps?limit=50', headers: HEADERS }),
    requests: (clients) => (clients < 100 ? 300 : 1_000),
  },
  {
    name: 'dryrun',
    connections: 'keep-alive',
    request: () => ({ method: 'POST', path: '/v1/dryrun', headers: HEADERS, body: DRYRUN }),
    requests: () => 3_000,
  },
];

/** A running server process. */
interface ServerProcess {
  origin: URL;
  appIds: string[];
  /** CPU time of the server process so far (ms). */
  cpuMs(): Promise<number>;
  stop(): void;
}

async function startServer(root: string): Promise<ServerProcess> {
  const child: ChildProcess = spawn(
    process.execPath,
    ['--import', 'tsx', join(ROOT, 'bench/local-server-process.ts'), String(SEEDED), root],
    {
      cwd: ROOT,
      // What `npm start` sets (lib/local/main.ts).
      env: { ...process.env, POWERTOOLS_LOG_LEVEL: 'WARN', POWERTOOLS_METRICS_DISABLED: 'true' },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    },
  );
  // Never outlive the benchmark, whatever ends it.
  const orphaned = () => child.kill('SIGTERM');
  process.once('exit', orphaned);
  // Powertools warns of an empty metrics flush whenever concurrent requests share its Metrics (local mode):
  // that line is dropped, everything else the server says on stderr is shown.
  child.stderr?.on('data', (chunk: Buffer) => {
    const lines = chunk.toString().split('\n');
    const kept = lines.filter((line) => !line.startsWith('No application metrics to publish'));
    if (kept.some((line) => line !== '')) process.stderr.write(kept.join('\n'));
  });
  const { url, appIds } = await new Promise<{ url: string; appIds: string[] }>((resolve, reject) => {
    let buffer = '';
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`local server exited ${code}`)));
    let found = false;
    // After the first line, stdout (a line per request) is read and dropped, as a terminal would show it.
    child.stdout?.on('data', (chunk: Buffer) => {
      if (found) return;
      buffer += chunk.toString();
      // Only whole lines: the one with the app ids is longer than a pipe's chunk.
      const line = buffer
        .split('\n')
        .slice(0, -1)
        .find((l) => l.startsWith('{"url"'));
      if (line) {
        found = true;
        buffer = '';
        resolve(JSON.parse(line) as { url: string; appIds: string[] });
      }
    });
  }).catch((error: unknown) => {
    child.kill('SIGTERM');
    throw error;
  });
  return {
    origin: new URL(url),
    appIds,
    cpuMs: () =>
      new Promise((resolve) => {
        child.once('message', (message) => {
          const { cpu } = message as { cpu: NodeJS.CpuUsage };
          resolve((cpu.user + cpu.system) / 1000);
        });
        child.send('cpu');
      }),
    stop: () => {
      process.off('exit', orphaned);
      child.removeAllListeners('exit');
      child.kill('SIGTERM');
    },
  };
}

/** The source of `ref`, extracted to a temporary directory that uses this checkout's node_modules. */
function extract(ref: string): string {
  if (!/^[\w./~^-]+$/.test(ref)) throw new Error(`--compare: ${JSON.stringify(ref)} is not a git revision`);
  const dir = mkdtempSync(join(tmpdir(), 'txs-bench-compare-'));
  execSync(`git archive ${ref} | tar -x -C ${dir}`, { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  return dir;
}

interface Pooled {
  latenciesMs: number[];
  elapsedMs: number;
  requests: number;
  serverCpuMs: number;
  clientCpuMs: number;
  loads: number[];
  errors: number;
}

/** Runs the operations at each level, against this checkout's server and, with `compareRef`, another one's. */
export async function apiLatency(options: ApiLatencyOptions): Promise<LatencyRow[]> {
  const servers = [{ name: 'this checkout', root: ROOT }];
  const other = options.compareRef;
  // A directory is used as it is (e.g. a copy of this checkout with one change undone).
  const given = other !== undefined && existsSync(join(other, 'lib/local/server.ts')) ? other : undefined;
  const extracted = other !== undefined && given === undefined ? extract(other) : undefined;
  if (other !== undefined) servers.push({ name: other, root: given ?? (extracted as string) });
  const rounds = options.rounds ?? (servers.length > 1 ? 2 : 1);
  const pooled = new Map<string, Pooled>();
  const keyOf = (server: string, op: Operation, clients: number) =>
    JSON.stringify([server, op.name, op.connections, clients]);
  try {
    for (let r = 0; r < rounds; r++) {
      for (const { name, root } of r % 2 === 0 ? servers : [...servers].reverse()) {
        progress(`API latency, round ${r + 1}/${rounds}: starting the server of ${name}`);
        const server = await startServer(root);
        try {
          for (const op of operations()) {
            // Warm-up: the JIT, the handler's first load and (status) the record cache see 300 requests first.
            if (op.warmUp !== false)
              await closedLoop({
                origin: server.origin,
                clients: 10,
                requests: 300,
                warmUpPerClient: 0,
                connections: op.connections,
                next: (i) => op.request(server.appIds, i),
              });
            for (const clients of options.levels) {
              const requests = op.requests(clients);
              progress(`  ${op.name} (${op.connections}) × ${requests} at ${clients} concurrent client(s)`);
              const load = loadavg()[0] ?? 0;
              const cpuBefore = await server.cpuMs();
              const run = await closedLoop({
                origin: server.origin,
                clients,
                requests,
                warmUpPerClient: 5,
                connections: op.connections,
                next: (i) => op.request(server.appIds, i),
              });
              const serverCpuMs = (await server.cpuMs()) - cpuBefore;
              const key = keyOf(name, op, clients);
              const into = pooled.get(key) ?? {
                latenciesMs: [],
                elapsedMs: 0,
                requests: 0,
                serverCpuMs: 0,
                clientCpuMs: 0,
                loads: [],
                errors: 0,
              };
              into.latenciesMs.push(...run.latenciesMs);
              into.elapsedMs += run.elapsedMs;
              into.requests += requests;
              into.serverCpuMs += serverCpuMs;
              into.clientCpuMs += run.clientCpuMs;
              into.loads.push(load);
              into.errors += run.errors;
              pooled.set(key, into);
            }
          }
        } finally {
          server.stop();
        }
      }
    }
  } finally {
    if (extracted) rmSync(extracted, { recursive: true, force: true });
  }
  const rows: LatencyRow[] = [];
  for (const { name } of servers) {
    for (const op of operations()) {
      for (const clients of options.levels) {
        const p = pooled.get(keyOf(name, op, clients));
        if (!p) continue;
        rows.push({
          server: name,
          operation: op.name,
          connections: op.connections,
          clients,
          requests: p.requests,
          p50Ms: round(quantile(p.latenciesMs, 0.5)),
          p99Ms: round(quantile(p.latenciesMs, 0.99)),
          perSecond: Math.round((p.requests / p.elapsedMs) * 1000),
          serverCpuMsPerRequest: round(p.serverCpuMs / p.requests, 3),
          clientCpuMsPerRequest: round(p.clientCpuMs / p.requests, 3),
          loadAverage: round(p.loads.reduce((a, b) => a + b, 0) / p.loads.length, 2),
          errors: p.errors,
        });
      }
    }
  }
  return rows;
}
