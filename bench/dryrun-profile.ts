/**
 * A dry-run loop to profile: `node --cpu-prof --import tsx bench/dryrun-profile.ts [scheduler|runner] [app] [ms]`
 * runs the scheduler's `submitDryrun` of the materialized AppDef (as TorchX's `submit_dryrun`), or the
 * Runner's `dryrunRequest` as the dryrun function runs it, of one app of the dry-run bench (`ddp`, `5-role`
 * or `sagemaker`; default `runner ddp 5000`), then prints the CPU time per dry run.
 */

import { Runner } from '../lib/runner/index.js';
import { createAwsBatchScheduler } from '../lib/schedulers/aws-batch/index.js';
import { createAwsSageMakerScheduler } from '../lib/schedulers/aws-sagemaker/index.js';
import { SchedulerRegistry } from '../lib/schedulers/registry.js';
import { parseRunRequest } from '../lib/specs/index.js';
import { DDP, FIVE_ROLES, SAGEMAKER } from './lib/dryrun-apps.js';

const [via = 'runner', app = 'ddp', msArg = '5000'] = process.argv.slice(2);
const bodies: Record<string, unknown> = { ddp: DDP, '5-role': FIVE_ROLES, sagemaker: SAGEMAKER };
const body = bodies[app];
if (body === undefined || (via !== 'runner' && via !== 'scheduler')) {
  throw new Error(`usage: dryrun-profile.ts [scheduler|runner] [${Object.keys(bodies).join('|')}] [ms]`);
}
const registry = new SchedulerRegistry(
  {
    aws_batch: (ctx) => createAwsBatchScheduler(ctx, { defaultUser: 'alice' }),
    aws_sagemaker: (ctx) => createAwsSageMakerScheduler(ctx, { defaultUser: 'alice' }),
  },
  { sessionName: 'torchx' },
);
const runner = new Runner({ schedulers: registry, store: undefined as never });
const request = parseRunRequest(body);
const materialized = runner.dryrunRequest(request, 'alice');
const scheduler = registry.get(request.scheduler);
const dryrun =
  via === 'runner'
    ? () => runner.dryrunRequest(request, 'alice')
    : () => scheduler.submitDryrun(materialized.app, materialized.cfg);

const ms = Number(msArg);
const cpu = process.cpuUsage();
const end = Date.now() + ms;
let n = 0;
while (Date.now() < end) {
  for (let i = 0; i < 100; i++) dryrun();
  n += 100;
}
const used = process.cpuUsage(cpu);
console.log(`${via} ${app}: ${n} dry runs, ${((used.user + used.system) / n).toFixed(2)} µs CPU each`);
