/**
 * The Planner of the dry-run and scheduler-listing functions: dry runs and scheduler descriptions over each
 * scheduler's translation (aws_batch and aws_sagemaker without SDK clients; no DynamoDB), built on first use,
 * once per cold start. Each translation module is loaded when a request first names its scheduler.
 */
import { Planner } from '../../lib/runner/index.js';
import { TRANSLATOR_MODULES } from './backends/translators.js';
import { onForget } from './container.js';
import { type LazyRegistry, lazyRegistry, loadSchedulers, plannerOptions } from './scheduler-modules.js';

let built: { planner: Planner; schedulers: LazyRegistry } | undefined;
onForget(() => {
  built = undefined;
});

/**
 * The Planner of this process, with the translation of `scheduler` loaded (of every enabled scheduler when
 * omitted). Its schedulers only translate: they hold nothing to close.
 */
export async function planner(scheduler?: string): Promise<Planner> {
  if (built === undefined) {
    const schedulers = lazyRegistry(TRANSLATOR_MODULES);
    built = { planner: new Planner(plannerOptions(schedulers)), schedulers };
  }
  const current = built;
  await loadSchedulers(current.schedulers, scheduler);
  return current.planner;
}
