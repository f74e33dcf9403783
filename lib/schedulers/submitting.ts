/**
 * Base of a scheduler that submits what its translator translates: the run options, capabilities,
 * validation, dry runs and app ids are the translator's (the same translation the dry-run functions use
 * alone); the subclass adds the backend calls.
 *
 * @module
 */
import type { AppDef, AppDryRunInfo, Cfg, JobWorkspace, RunOpts } from '../specs/index.js';
import { Scheduler, type SchedulerCapabilities, type SchedulerContext } from './scheduler.js';

/**
 * A scheduler composed of a translator and the backend calls the subclass implements.
 *
 * @example
 * ```ts
 * class BatchScheduler extends SubmittingScheduler<AwsBatchOpts, AwsBatchRequest> {
 *   constructor(context: SchedulerContext) { super(new AwsBatchTranslator(context), context); }
 *   // schedule, describe, list, cancelExisting …
 * }
 * ```
 */
export abstract class SubmittingScheduler<Opts extends Cfg, Request> extends Scheduler<Opts, Request> {
  constructor(
    /** The translation: the scheduler's name, options, checks and native requests. */
    protected readonly translator: Scheduler<Opts, Request>,
    context: SchedulerContext,
  ) {
    super(translator.backend, context);
  }

  /** The translator's run options. */
  runOpts(): RunOpts {
    return this.translator.runOpts();
  }

  /** The translator's capabilities. */
  capabilities(): SchedulerCapabilities {
    return this.translator.capabilities();
  }

  protected translate(app: AppDef, cfg: Opts, workspace?: JobWorkspace): AppDryRunInfo<Request> {
    return this.translator.submitDryrun(app, cfg, workspace);
  }

  /** The translator's dry run. */
  override submitDryrun(
    app: AppDef,
    cfg: Readonly<Cfg> = {},
    workspace?: JobWorkspace,
  ): AppDryRunInfo<Request> {
    return this.translator.submitDryrun(app, cfg, workspace);
  }

  /** The translator's checks and dry run. */
  override validatedDryrun(
    app: AppDef,
    cfg: Readonly<Cfg>,
    workspace?: JobWorkspace,
  ): AppDryRunInfo<Request> {
    return this.translator.validatedDryrun(app, cfg, workspace);
  }

  /** The translator's workspace check. */
  override checkWorkspace(workspace: JobWorkspace): void {
    this.translator.checkWorkspace(workspace);
  }

  /** The translator's checks. */
  override validate(app: AppDef, cfg: Readonly<Cfg> = {}): void {
    this.translator.validate(app, cfg);
  }

  /** The app id the translator assigns. */
  appIdOf(dryrun: AppDryRunInfo<Request>): string {
    return this.translator.appIdOf(dryrun);
  }

  /** The native name the translator reads from an app id. */
  override nativeNameOf(appId: string): string {
    return this.translator.nativeNameOf(appId);
  }
}
