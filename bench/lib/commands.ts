/**
 * What the command-line benchmarks (`bench/cli.ts`, `bench/wait.ts`) share: where TorchX's sources are, a
 * quiet local server behind a counting pass-through, and timing whole commands alternately, one of each per
 * round, so load changes hit all of them alike.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median } from './stats.js';

/** The clone's root directory. */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** TorchX's sources: TXS_VENDOR_DIR (as python/run-tests.sh), else ../shared/vendor next to the clone. */
export const VENDOR =
  process.env.TXS_VENDOR_DIR ??
  [join(ROOT, '../shared/vendor'), join(ROOT, '../../shared/vendor')].find((dir) => existsSync(dir)) ??
  join(ROOT, '../shared/vendor');

/** `--rounds=N` from the command line, else `fallback`. */
export function roundsArg(fallback: number): number {
  return Number(process.argv.find((a) => a.startsWith('--rounds='))?.split('=')[1] ?? fallback);
}

/** A pass-through to `target` on a loopback port that shows each request and its answer to `observe`. */
export async function countingProxy(
  target: string,
  observe: (req: IncomingMessage, answer: IncomingMessage) => void,
): Promise<{ url: string; close(): void }> {
  const upstream = new URL(target);
  const proxy = createServer((req, res) => {
    const forward = request(
      {
        host: upstream.hostname,
        port: upstream.port,
        path: req.url,
        method: req.method,
        headers: { ...req.headers, host: upstream.host },
      },
      (answer) => {
        observe(req, answer);
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    req.pipe(forward);
  });
  await new Promise<void>((ok) => proxy.listen(0, '127.0.0.1', ok));
  return { url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, close: () => proxy.close() };
}

/** A local server behind a counting proxy, in its own temporary directory. */
export interface ProxiedLocalServer {
  /** The proxy's URL (what `txs` is pointed at). */
  url: string;
  /** The server's data directory, also the commands' working directory. */
  work: string;
  /** Stops the proxy and the server and removes the directory. */
  close(): Promise<void>;
}

/**
 * Starts a quiet local server (records in memory, no reconciler, no metrics or logs) in a fresh temporary
 * directory named after `bench`, behind {@link countingProxy} with `observe`.
 */
export async function proxiedLocalServer(
  bench: string,
  observe: (req: IncomingMessage, answer: IncomingMessage) => void,
): Promise<ProxiedLocalServer> {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
  process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
  const work = mkdtempSync(join(tmpdir(), `txs-bench-${bench}-`));
  const { startLocalServer } = await import('../../lib/local/server.js');
  const server = await startLocalServer({ port: 0, dataDir: work, inMemory: true, reconcileEveryMs: 0 });
  const proxy = await countingProxy(server.url, observe);
  return {
    url: proxy.url,
    work,
    close: async () => {
      proxy.close();
      await server.close();
      rmSync(work, { recursive: true, force: true });
    },
  };
}

/** One command to time. */
export interface TimedCommand {
  file: string;
  args: string[];
  env: NodeJS.ProcessEnv;
}

/** Wall time (ms) of one run of `command` in `cwd`; rejects when it fails. */
export function timeCommand(name: string, command: TimedCommand, cwd: string): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    execFile(command.file, command.args, { env: command.env, cwd, maxBuffer: 1 << 24 }, (error) => {
      if (error) reject(new Error(`${name} failed: ${error.message}`));
      else resolve(performance.now() - started);
    });
  });
}

/** Runs every command once per round for `rounds` rounds; the median wall time (ms) of each, rounded. */
export async function alternateMedians(
  commands: Readonly<Record<string, TimedCommand>>,
  rounds: number,
  cwd: string,
): Promise<Record<string, number>> {
  const samples: Record<string, number[]> = Object.fromEntries(Object.keys(commands).map((k) => [k, []]));
  for (let r = 0; r < rounds; r++) {
    for (const [name, command] of Object.entries(commands)) {
      samples[name]?.push(await timeCommand(name, command, cwd));
    }
    process.stderr.write(`\rround ${r + 1}/${rounds}`);
  }
  process.stderr.write('\n');
  return Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, Math.round(median(v))]));
}
