/**
 * In-process dryrun throughput: the deployed dryrun handler (middy chain, JSON parse, zod validation,
 * component materialization, translation to the native request, JSON response) and the Runner's
 * dryrunRequest alone, for dist.ddp 2x8 on aws_batch and a 5-role AppDef on aws_batch.
 */
import { parseRunRequest } from '../lib/specs/index.js';
import type { FunctionsEnvironment } from '../test/reliability/helpers/environment.js';
import { apiEvent, lambdaContext } from '../test/reliability/helpers/lambda.js';
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
  via: 'handler' | 'runner';
  perSecond: number;
  usPerOp: number;
}

export async function dryrunThroughput(env: FunctionsEnvironment): Promise<DryrunRow[]> {
  const rows: DryrunRow[] = [];
  const runner = env.container.runner();
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
  }
  return rows;
}
