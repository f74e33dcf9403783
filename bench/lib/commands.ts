/**
 * What the command-line benchmarks (`bench/cli.ts`, `bench/wait.ts`) share: where TorchX's sources are, a
 * counting pass-through in front of the local server, and timing whole commands alternately, one of each per
 * round, so load changes hit all of them alike.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, type IncomingMessage, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { median } from './stats.js';

/** TorchX's sources: TXS_VENDOR_DIR (as python/run-tests.sh), else ../shared/vendor next to the clone. */
export function vendorDir(root: string): string {
  return (
    process.env.TXS_VENDOR_DIR ??
    [join(root, '../shared/vendor'), join(root, '../../shared/vendor')].find((dir) => existsSync(dir)) ??
    join(root, '../shared/vendor')
  );
}

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
