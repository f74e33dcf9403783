/**
 * Local API latency: the local server (`npm start`: the same handlers over HTTP, dynalite in-process) in its
 * own process; closed-loop clients here send status, list and dryrun requests at 1, 10 and 100 concurrent
 * clients. Reported: p50 and p99 of each request's round trip, and requests per second.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from './bundling.js';
import { msSince, progress, quantile, round } from './lib/stats.js';

/** Latency of one operation at one concurrency. */
export interface LatencyRow {
  operation: string;
  clients: number;
  requests: number;
  p50Ms: number;
  p99Ms: number;
  perSecond: number;
}

const DRYRUN = JSON.stringify({
  scheduler: 'aws_batch',
  component: 'dist.ddp',
  args: ['-j', '2x8', '--script', 'train.py'],
  cfg: { queue: 'ml-gpu-queue' },
});

export async function apiLatency(levels = [1, 10, 100]): Promise<LatencyRow[]> {
  progress('API latency: starting the local server in its own process');
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(ROOT, 'bench/local-server-process.ts'), '200'],
    {
      cwd: ROOT,
      env: { ...process.env, POWERTOOLS_LOG_LEVEL: 'SILENT', POWERTOOLS_METRICS_DISABLED: 'true' },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const { url, appIds } = await new Promise<{ url: string; appIds: string[] }>((resolve, reject) => {
    let buffer = '';
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`local server exited ${code}`)));
    child.stdout.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const line = buffer.split('\n').find((l) => l.startsWith('{"url"'));
      if (line) resolve(JSON.parse(line) as { url: string; appIds: string[] });
    });
  });
  const headers = { 'x-txs-user': 'bench', 'content-type': 'application/json' };
  const operations: Record<string, (i: number) => Promise<Response>> = {
    status: (i) =>
      fetch(`${url}/v1/apps/aws_batch/${encodeURIComponent(appIds[i % appIds.length] ?? '')}`, { headers }),
    list: () => fetch(`${url}/v1/apps?limit=50`, { headers }),
    dryrun: () => fetch(`${url}/v1/dryrun`, { method: 'POST', headers, body: DRYRUN }),
  };
  const rows: LatencyRow[] = [];
  try {
    for (const [operation, send] of Object.entries(operations)) {
      for (let i = 0; i < 20; i++) await (await send(i)).arrayBuffer();
      for (const clients of levels) {
        const requests = Math.max(200, clients * 10);
        progress(`API latency: ${operation} × ${requests} at ${clients} concurrent client(s)`);
        const latencies: number[] = [];
        let next = 0;
        const start = process.hrtime.bigint();
        await Promise.all(
          Array.from({ length: clients }, async () => {
            while (next < requests) {
              const i = next++;
              const t = process.hrtime.bigint();
              const response = await send(i);
              await response.arrayBuffer();
              if (response.status !== 200) throw new Error(`${operation} answered ${response.status}`);
              latencies.push(msSince(t));
            }
          }),
        );
        const elapsed = msSince(start);
        rows.push({
          operation,
          clients,
          requests,
          p50Ms: round(quantile(latencies, 0.5)),
          p99Ms: round(quantile(latencies, 0.99)),
          perSecond: Math.round((requests / elapsed) * 1000),
        });
      }
    }
  } finally {
    child.removeAllListeners('exit');
    child.kill('SIGTERM');
  }
  return rows;
}
