/**
 * In-process dry-run cost, in the same run as TorchX's `submit_dryrun` on the same AppDefs: `dist.ddp -j 2x8`
 * and a 5-role AppDef on aws_batch, a 1-role AppDef on aws_sagemaker. For each, measured through:
 *
 * - `handler`: the deployed dryrun function (middy chain, JSON parse, zod validation, component
 *   materialization, translation, JSON response);
 * - `runner`: the deployed container's `Runner.dryrunRequest` (for a component: argument parsing and
 *   materialization, then the dry run);
 * - `runner, app given`: `Runner.dryrun` of the materialized AppDef (what the Runner adds to the scheduler's
 *   dry run, without the component; only for component requests);
 * - `scheduler`: the scheduler's `submitDryrun` of the materialized AppDef and its resolved options, which is
 *   what TorchX's `submit_dryrun` does (resolve the options, translate);
 * - `torchx`: TorchX 0.8's `AWSBatchScheduler` / `AWSSageMakerScheduler.submit_dryrun` (bench/torchx-dryrun.py,
 *   `/usr/bin/python3` with ../shared/vendor/torchx-b72ba03, when TorchX is importable there).
 *
 * Every row is measured in chunks of the same length, alternately, round after round (the rows of one app
 * one after the other, the order rotated each round), so that load on the shared machine falls on all rows
 * alike. A row's figure is the median over the rounds of the process CPU time (user + system) per dry run,
 * TorchX's likewise (`time.process_time`); the ratio is TorchX's CPU time over ours. Wall time is reported
 * beside it.
 *
 * With `TXS_DRYRUN_BASELINE=<another checkout>` (its own node_modules), the same rows of that checkout's code
 * (its dryrun function, container Runner and schedulers, imported in-process) are measured in the same rounds
 * and reported as `… (baseline)`: a before/after in one alternating run.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { createAwsBatchScheduler } from '../lib/schedulers/aws-batch/index.js';
import { createAwsSageMakerScheduler } from '../lib/schedulers/aws-sagemaker/index.js';
import { parseRunRequest } from '../lib/specs/index.js';
import type { FunctionsEnvironment } from '../test/reliability/helpers/environment.js';
import { apiEvent, lambdaContext, type ProxyHandler } from '../test/reliability/helpers/lambda.js';
import { ROOT } from './bundling.js';
import { VENDOR } from './lib/commands.js';
import { APPS } from './lib/dryrun-apps.js';
import { median, progress, round } from './lib/stats.js';

/** How a dry run was invoked. */
export type DryrunVia = 'handler' | 'runner' | 'runner, app given' | 'scheduler' | 'torchx';

/** One dry-run row. */
export interface DryrunRow {
  app: string;
  via: DryrunVia | `${Exclude<DryrunVia, 'torchx'>} (baseline)`;
  /** Median over the rounds of process CPU µs (user + system) per dry run. */
  cpuUsPerOp: number;
  /** Median over the rounds of wall-clock µs per dry run. */
  usPerOp: number;
  /** Dry runs per second of wall time (from {@link usPerOp}). */
  perSecond: number;
  /** TorchX's CPU time per `submit_dryrun` over ours, same app, same rounds (when TorchX ran). */
  vsTorchx?: number;
  /** Rounds measured. */
  rounds: number;
}

/** What one chunk measured. */
interface Chunk {
  n: number;
  cpuUs: number;
  wallUs: number;
}

/** A row to measure: a chunk of dry runs of about `ms` at a time. */
interface Target {
  app: string;
  via: DryrunRow['via'];
  chunk(ms: number): Promise<Chunk>;
}

/** Runs `fn` for about `ms` (whole batches of 20) and reports the count, CPU and wall time. */
async function chunkOf(fn: () => unknown, ms: number): Promise<Chunk> {
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  const end = start + BigInt(Math.round(ms * 1e6));
  let n = 0;
  while (process.hrtime.bigint() < end) {
    for (let i = 0; i < 20; i++) {
      const out = fn();
      if (out instanceof Promise) await out;
    }
    n += 20;
  }
  const wallUs = Number(process.hrtime.bigint() - start) / 1e3;
  const used = process.cpuUsage(cpu);
  return { n, cpuUs: used.user + used.system, wallUs };
}

/** TorchX 0.8 (the last with aws_batch and aws_sagemaker) from ../shared/vendor, run by the Debian Python. */
const PYTHON = '/usr/bin/python3';

/** bench/torchx-dryrun.py in round-serving mode; undefined when TorchX cannot be imported here. */
async function startTorchx(): Promise<
  { chunk(app: string, ms: number): Promise<Chunk>; close(): void } | undefined
> {
  if (!existsSync(PYTHON) || !existsSync(join(VENDOR, 'torchx-b72ba03'))) return undefined;
  const child: ChildProcessWithoutNullStreams = spawn(PYTHON, [join(ROOT, 'bench/torchx-dryrun.py')], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      PYTHONPATH: `${join(VENDOR, 'torchx-b72ba03')}:${join(VENDOR, 'docstring_parser')}`,
      PYTHONWARNINGS: 'ignore',
      AWS_DEFAULT_REGION: 'us-east-1',
    },
  });
  let stderr = '';
  child.stderr.on('data', (data: Buffer) => {
    stderr += data.toString();
  });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async (): Promise<string> => {
    const line = await lines.next();
    if (line.done) throw new Error(`TorchX stopped: ${stderr.trim().split('\n').pop() ?? ''}`);
    return line.value;
  };
  try {
    const ready = await next();
    if (ready !== 'ready') throw new Error(`TorchX said '${ready}'`);
  } catch (error) {
    child.kill();
    progress(`TorchX not importable, no ratio: ${(error as Error).message}`);
    return undefined;
  }
  return {
    async chunk(app, ms) {
      child.stdin.write(`${app}\t${ms}\n`);
      return JSON.parse(await next()) as Chunk;
    },
    close: () => child.kill(),
  };
}

/** The modules of one checkout the rows need. */
interface Code {
  handler: ProxyHandler;
  runner: {
    dryrunRequest(request: unknown, owner: string): { app: unknown; cfg: Record<string, unknown> };
    dryrun(app: unknown, scheduler: string, cfg: unknown, session: string, owner: string): unknown;
  };
  parseRunRequest(body: unknown): { app?: unknown; cfg: unknown };
  scheduler(name: string): { submitDryrun(app: unknown, cfg: unknown): unknown };
}

/** The schedulers the `scheduler` rows use, as the bench builds them (default user `alice`). */
function schedulersOf(
  batch: typeof createAwsBatchScheduler,
  sagemaker: typeof createAwsSageMakerScheduler,
): Code['scheduler'] {
  const schedulers: Record<string, { submitDryrun(app: unknown, cfg: unknown): unknown }> = {
    aws_batch: batch({ sessionName: 'torchx' }, { defaultUser: 'alice' }) as never,
    aws_sagemaker: sagemaker({ sessionName: 'torchx' }, { defaultUser: 'alice' }) as never,
  };
  return (name) => schedulers[name] as { submitDryrun(app: unknown, cfg: unknown): unknown };
}

/** The current code: the functions environment's handler and container Runner, this checkout's schedulers. */
async function currentCode(env: FunctionsEnvironment): Promise<Code> {
  return {
    handler: env.api.Dryrun,
    runner: (await env.runners.runner('aws_batch')) as unknown as Code['runner'],
    parseRunRequest: parseRunRequest as Code['parseRunRequest'],
    scheduler: schedulersOf(createAwsBatchScheduler, createAwsSageMakerScheduler),
  };
}

/** Another checkout's dryrun function, container Runner and schedulers, imported in-process. */
async function checkoutCode(checkout: string): Promise<Code> {
  const load = (path: string) => import(join(checkout, path));
  const batch = await load('lib/schedulers/aws-batch/index.ts');
  const sagemaker = await load('lib/schedulers/aws-sagemaker/index.ts');
  return {
    handler: (await load('functions/api/dryrun.ts')).handler,
    // The Runner is in functions/schedulers/table.ts; in shared/runners.ts or shared/container.ts before.
    runner: await load(
      ['functions/schedulers/table.ts', 'functions/shared/runners.ts'].find((path) =>
        existsSync(join(checkout, path)),
      ) ?? 'functions/shared/container.ts',
    ).then((module) => module.runner('aws_batch')),
    parseRunRequest: (await load('lib/specs/index.ts')).parseRunRequest,
    scheduler: schedulersOf(batch.createAwsBatchScheduler, sagemaker.createAwsSageMakerScheduler),
  };
}

/** The rows of one checkout's code for one app. */
function targetsOf(code: Code, app: string, body: (typeof APPS)[number][1], suffix: string): Target[] {
  const event = apiEvent({ method: 'POST', resource: '/v1/dryrun', body });
  const context = lambdaContext('bench-dryrun');
  const request = code.parseRunRequest(body);
  const materialized = code.runner.dryrunRequest(request, 'alice');
  const scheduler = code.scheduler(body.scheduler);
  const via = (name: Exclude<DryrunVia, 'torchx'>) => `${name}${suffix}` as DryrunRow['via'];
  const targets: Target[] = [
    {
      app,
      via: via('handler'),
      chunk: (ms) =>
        chunkOf(async () => {
          const reply = await code.handler({ ...event, headers: { ...event.headers } }, context);
          if (reply.statusCode !== 200) throw new Error(`dryrun answered ${reply.statusCode}: ${reply.body}`);
        }, ms),
    },
    {
      app,
      via: via('runner'),
      chunk: (ms) => chunkOf(() => code.runner.dryrunRequest(request, 'alice'), ms),
    },
  ];
  if (request.app === undefined) {
    targets.push({
      app,
      via: via('runner, app given'),
      chunk: (ms) =>
        chunkOf(
          () => code.runner.dryrun(materialized.app, body.scheduler, request.cfg, 'torchx', 'alice'),
          ms,
        ),
    });
  }
  targets.push({
    app,
    via: via('scheduler'),
    chunk: (ms) => chunkOf(() => scheduler.submitDryrun(materialized.app, materialized.cfg), ms),
  });
  return targets;
}

/**
 * Measures every row in alternating rounds (see the module comment).
 *
 * @param rounds rounds per app; each row gets one chunk of `chunkMs` per round.
 */
export async function dryrunThroughput(
  env: FunctionsEnvironment,
  { rounds = 15, chunkMs = 100 }: { rounds?: number; chunkMs?: number } = {},
): Promise<DryrunRow[]> {
  const baselineDir = process.env.TXS_DRYRUN_BASELINE;
  const current = await currentCode(env);
  const baseline = baselineDir ? await checkoutCode(resolve(baselineDir)) : undefined;
  progress('dryrun: starting TorchX (bench/torchx-dryrun.py)');
  const torchx = await startTorchx();
  const rows: DryrunRow[] = [];
  try {
    for (const [app, body] of APPS) {
      const targets = [
        ...targetsOf(current, app, body, ''),
        ...(baseline ? targetsOf(baseline, app, body, ' (baseline)') : []),
      ];
      if (torchx) targets.push({ app, via: 'torchx', chunk: (ms) => torchx.chunk(app, ms) });
      progress(
        `dryrun: ${app}, ${targets.length} rows × ${rounds} rounds (load ${loadavg()[0]?.toFixed(1)})`,
      );
      for (const target of targets) await target.chunk(chunkMs); // warm-up
      const chunks = new Map<Target, Chunk[]>(targets.map((t) => [t, []]));
      for (let r = 0; r < rounds; r++) {
        for (let i = 0; i < targets.length; i++) {
          const target = targets[(i + r) % targets.length] as Target;
          chunks.get(target)?.push(await target.chunk(chunkMs));
        }
      }
      const appRows = targets.map((target): DryrunRow => {
        const measured = chunks.get(target) ?? [];
        const usPerOp = median(measured.map((c) => c.wallUs / c.n));
        return {
          app,
          via: target.via,
          cpuUsPerOp: round(median(measured.map((c) => c.cpuUs / c.n)), 2),
          usPerOp: round(usPerOp, 2),
          perSecond: Math.round(1e6 / usPerOp),
          rounds,
        };
      });
      const theirs = appRows.find((row) => row.via === 'torchx');
      if (theirs) for (const row of appRows) row.vsTorchx = round(theirs.cpuUsPerOp / row.cpuUsPerOp, 2);
      rows.push(...appRows);
    }
  } finally {
    torchx?.close();
  }
  return rows;
}
