/**
 * A dry-run loop to profile (`node --cpu-prof --import tsx bench/dryrun-profile.ts`): the Runner's
 * dryrunRequest of dist.ddp 2x8 on aws_batch, as the dryrun function runs it, for about 5 s.
 */

import { Runner } from '../lib/runner/index.js';
import { createAwsBatchScheduler } from '../lib/schedulers/aws-batch/index.js';
import { SchedulerRegistry } from '../lib/schedulers/registry.js';
import { parseRunRequest } from '../lib/specs/index.js';

const registry = new SchedulerRegistry(
  { aws_batch: (ctx) => createAwsBatchScheduler(ctx, { defaultUser: 'alice' }) },
  { sessionName: 'torchx' },
);
const runner = new Runner({ schedulers: registry, store: undefined as never });
const request = parseRunRequest({
  scheduler: 'aws_batch',
  component: 'dist.ddp',
  args: ['-j', '2x8', '--script', 'train.py'],
  cfg: { queue: 'ml-gpu-queue' },
});
const end = Date.now() + Number(process.argv[2] ?? 5000);
let n = 0;
while (Date.now() < end) {
  for (let i = 0; i < 100; i++) runner.dryrunRequest(request, 'alice');
  n += 100;
}
console.log(`${n} dry runs, ${((Number(process.argv[2] ?? 5000) * 1000) / n).toFixed(1)} µs each`);
