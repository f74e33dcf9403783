/** lsf: TorchX's bsub script, for dry runs (nothing is submitted). */
import { LsfScheduler } from '../../lib/schedulers/lsf/index.js';
import type { SchedulerFactory } from '../../lib/schedulers/registry.js';

/** The lsf factory. */
export function create(): SchedulerFactory {
  return (ctx) => new LsfScheduler(ctx);
}
