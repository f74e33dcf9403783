/**
 * In-process dryrun throughput: the deployed dryrun handler (middy chain, JSON parse, zod validation,
 * component materialization, translation to the native request, JSON response), the Runner's
 * dryrunRequest alone, and the scheduler's `submitDryrun` on the materialized AppDef, for dist.ddp 2x8 on
 * aws_batch and a 5-role AppDef on aws_batch; and, in the same run, TorchX 0.8's
 * `AWSBatchScheduler.submit_dryrun` on the same AppDefs (bench/torchx-dryrun.py, when TorchX is importable)
 * with the ratio of the rates.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createAwsBatchScheduler } from '../lib/schedulers/aws-batch/index.js';
import { parseRunRequest } from '../lib/specs/index.js';
import type { FunctionsEnvironment } from '../test/reliability/helpers/environment.js';
import { apiEvent, lambdaContext } from '../test/reliability/helpers/lambda.js';
import { ROOT } from './bundling.js';
import { msSince, progress, round } from './lib/stats.js';

const DDP = {
  scheduler: 'aws_batch',
  component: 'dist.ddp',
  args: ['-j', '2x8', '--script', 'train.py'],
  cfg: { queue: 'ml-gpu-queue' },
};

const FIVE_ROLES = {
  scheduler: 'aws_batch',
  cfg: { queue: 'ml-gpu-queue' },
  app: {
    name: 'pipeline',
    roles: ['reader', 'trainer', 'evaluator', 'ps', 'writer'].map((name, i) => ({
      name,
      image: 'ghcr.io/pytorch/torchx:0.8',
      entrypoint: 'python',
      args: ['-m', `pipeline.${name}`, '--shard', String(i)],
      env: { ROLE: name, LOGLEVEL: 'INFO' },
      numReplicas: i + 1,
      resource: { cpu: 4, gpu: i === 1 ? 8 : 0, memMB: 16_384 },
      maxRetries: 2,
    })),
  },
};

/** Runs `fn` for about `ms` after a warm-up and returns operations per second. */
async function rate(
  fn: () => Promise<unknown> | unknown,
  ms = 2000,
): Promise<{ perSecond: number; usPerOp: number }> {
  for (let i = 0; i < 200; i++) await fn();
  const start = process.hrtime.bigint();
  let n = 0;
  while (msSince(start) < ms) {
    for (let i = 0; i < 50; i++) await fn();
    n += 50;
  }
  const elapsed = msSince(start);
  return { perSecond: Math.round((n / elapsed) * 1000), usPerOp: round((elapsed * 1000) / n, 1) };
}

/** One dryrun throughput row. */
export interface DryrunRow {
  app: string;
  via: 'handler' | 'runner' | 'scheduler' | 'torchx';
  perSecond: number;
  usPerOp: number;
  /** Our rate over TorchX's `submit_dryrun` rate on the same AppDef (when TorchX ran). */
  vsTorchx?: number;
}

/** TorchX 0.8 (the last with aws_batch) from ../shared/vendor, run by the Debian Python that has its deps. */
const VENDOR =
  process.env.TXS_VENDOR_DIR ??
  [join(ROOT, '../shared/vendor'), join(ROOT, '../../shared/vendor')].find((dir) => existsSync(dir)) ??
  join(ROOT, '../shared/vendor');
const PYTHON = '/usr/bin/python3';

/** TorchX's submit_dryrun rates by app name, or undefined when TorchX cannot be imported here. */
async function torchxRates(): Promise<Record<string, { perSecond: number; usPerOp: number }> | undefined> {
  if (!existsSync(PYTHON) || !existsSync(join(VENDOR, 'torchx-b72ba03'))) return undefined;
  try {
    const { stdout } = await promisify(execFile)(PYTHON, [join(ROOT, 'bench/torchx-dryrun.py'), '2'], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH,
        PYTHONPATH: `${join(VENDOR, 'torchx-b72ba03')}:${join(VENDOR, 'docstring_parser')}`,
        PYTHONWARNINGS: 'ignore',
        AWS_DEFAULT_REGION: 'us-east-1',
      },
    });
    return JSON.parse(stdout.trim().split('\n').pop() ?? '{}');
  } catch (error) {
    progress(`TorchX not importable, no ratio: ${(error as Error).message.split('\n')[0]}`);
    return undefined;
  }
}

export async function dryrunThroughput(env: FunctionsEnvironment): Promise<DryrunRow[]> {
  const rows: DryrunRow[] = [];
  const runner = await env.runners.runner('aws_batch');
  const scheduler = createAwsBatchScheduler({ sessionName: 'torchx' }, { defaultUser: 'alice' });
  progress('dryrun throughput: TorchX submit_dryrun (same AppDefs)');
  const torchx = await torchxRates();
  for (const [app, body] of [
    ['dist.ddp 2x8 (aws_batch)', DDP],
    ['5-role AppDef (aws_batch)', FIVE_ROLES],
  ] as const) {
    progress(`dryrun throughput: ${app}`);
    const event = apiEvent({ method: 'POST', resource: '/v1/dryrun', body });
    const context = lambdaContext('bench-dryrun');
    const viaHandler = await rate(async () => {
      const reply = await env.api.Dryrun({ ...event, headers: { ...event.headers } }, context);
      if (reply.statusCode !== 200) throw new Error(`dryrun answered ${reply.statusCode}: ${reply.body}`);
    });
    rows.push({ app, via: 'handler', ...viaHandler });
    const request = parseRunRequest(body);
    rows.push({ app, via: 'runner', ...(await rate(() => runner.dryrunRequest(request, 'alice'))) });
    const materialized = runner.dryrunRequest(request, 'alice');
    const appDef = materialized.app;
    const cfg = materialized.cfg;
    rows.push({ app, via: 'scheduler', ...(await rate(() => scheduler.submitDryrun(appDef, cfg))) });
    const theirs = torchx?.[app];
    if (theirs) {
      for (const row of rows.filter((r) => r.app === app))
        row.vsTorchx = round(row.perSecond / theirs.perSecond, 2);
      rows.push({ app, via: 'torchx', ...theirs, vsTorchx: 1 });
    }
  }
  return rows;
}
