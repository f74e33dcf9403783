/**
 * The `lsf` scheduler: TorchX's LSF scheduler's run options and bsub script, for dry runs.
 *
 * LSF is submitted to with its command-line tools (`bsub`, `bjobs`, `bkill`) on a host of the cluster; a
 * Lambda function has neither the tools nor a cluster login, and LSF's REST service (LSF Application Center /
 * the LSF Web Services) is a separately licensed product with no stable public API to code against. So
 * torchx-serverless shows the exact script TorchX would run and does not submit it: run it on a login node
 * with `/bin/bash` (see docs/schedulers/lsf.md).
 *
 * @module
 */
import { type AppDef, AppDryRunInfo, type RunOpts } from '../../specs/index.js';
import type { SchedulerContext } from '../scheduler.js';
import { TranslatingScheduler } from '../translating.js';
import { type LsfOpts, lsfRunOpts } from './options.js';
import { type LsfRequest, type LsfUniqueNamer, translateLsfApp } from './translate.js';

/** Construction options of {@link LsfScheduler}. */
export interface LsfSchedulerOptions {
  /** Makes the app's unique name; TorchX's `make_unique` by default. */
  uniqueNamer?: LsfUniqueNamer;
}

/** Why `lsf` submits nothing (the end of every error on run, describe, cancel). */
export const LSF_NOT_SUBMITTED =
  'LSF is driven by bsub/bjobs/bkill on a cluster host, which a serverless control plane does not have; ' +
  'run `txs run --dryrun -s lsf ...` and submit the script it prints with /bin/bash on a login node.';

/**
 * The `lsf` scheduler (dry runs only).
 *
 * @example
 * ```ts
 * const info = new LsfScheduler({ sessionName: 'torchx' }).submitDryrun(app, { jobdir: '/mnt/jobs' });
 * console.log(info.request.script);
 * ```
 */
export class LsfScheduler extends TranslatingScheduler<LsfOpts, LsfRequest> {
  private readonly uniqueNamer: LsfUniqueNamer | undefined;

  constructor(context: SchedulerContext, options: LsfSchedulerOptions = {}) {
    super('lsf', context, LSF_NOT_SUBMITTED);
    this.uniqueNamer = options.uniqueNamer;
  }

  runOpts(): RunOpts {
    return lsfRunOpts();
  }

  protected translate(app: AppDef, cfg: LsfOpts): AppDryRunInfo<LsfRequest> {
    const request = translateLsfApp(app, cfg, this.uniqueNamer);
    return new AppDryRunInfo(
      this.backend,
      app,
      cfg,
      request,
      (r) => `${[...r.cmd, '$BSUB_SCRIPT'].join(' ')}\n${r.script}`,
    );
  }
}
