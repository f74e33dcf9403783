/**
 * The scheduler contract (port of TorchX's `torchx.schedulers.api.Scheduler`). A scheduler translates a
 * portable AppDef into its native request (`submitDryrun`, pure), submits it (`schedule`), and answers
 * describe, list, cancel, delete and logs for the apps it ran.
 *
 * @module
 */
import {
  type AppDef,
  type AppDryRunInfo,
  type Cfg,
  type DescribeAppResponse,
  isNullResource,
  isTerminal,
  type JobWorkspace,
  type ListAppResponse,
  type RunOpts,
  ValidationError,
} from '../specs/index.js';
import { NotSupportedError } from './errors.js';
import { filterLines, type LogIterOptions, type LogPage, type LogPageRequest } from './logs.js';

/** What every scheduler can be given at construction. */
export interface SchedulerContext {
  /** The session name (TorchX's runner name); `torchx` by default. */
  sessionName: string;
  /** Sleeps; injectable so tests and tailing need no real waiting. */
  sleep?: (ms: number) => Promise<void>;
  /** Current time in epoch ms; injectable for tests. */
  now?: () => number;
}

/** What a scheduler supports, for the compatibility table and `GET /v1/schedulers`. */
export interface SchedulerCapabilities {
  cancel: boolean;
  logs: boolean;
  /** `full` when describe reports per-replica statuses. */
  describe: 'full' | 'partial';
  distributed: boolean;
  mounts: boolean;
  retries: boolean;
  elasticity: boolean;
}

/**
 * What a scheduler that runs apps supports unless it says otherwise: cancel, logs, a full describe and
 * distributed apps; no mounts, retries or elasticity.
 */
export const RUNNING_CAPABILITIES: Readonly<SchedulerCapabilities> = Object.freeze({
  cancel: true,
  logs: true,
  describe: 'full',
  distributed: true,
  mounts: false,
  retries: false,
  elasticity: false,
});

/** Apps the base {@link Scheduler.describeMany} describes at the same time. */
export const DESCRIBE_MANY_CONCURRENCY = 8;

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Base class of every scheduler, generic over its resolved options type and native request type.
 *
 * Subclasses implement {@link runOpts}, {@link translate} (pure), {@link schedule}, {@link describe},
 * {@link list} and {@link cancelExisting}; they may override {@link deleteExisting}, {@link readLogs} and
 * {@link validate}.
 *
 * @example
 * ```ts
 * const info = scheduler.submitDryrun(app, { queue: 'gpu' }); // no AWS call
 * const appId = await scheduler.schedule(info);                // the AWS calls
 * const desc = await scheduler.describe(appId);
 * ```
 */
export abstract class Scheduler<Opts extends Cfg = Cfg, Request = unknown> {
  /** The session name handles are made with. */
  readonly sessionName: string;
  protected readonly sleep: (ms: number) => Promise<void>;
  protected readonly now: () => number;

  constructor(
    /** The scheduler's registered name, e.g. `aws_batch`. */
    readonly backend: string,
    context: SchedulerContext,
  ) {
    this.sessionName = context.sessionName;
    this.sleep = context.sleep ?? realSleep;
    this.now = context.now ?? Date.now;
  }

  /** The run options this scheduler accepts (TorchX `run_opts()`). */
  abstract runOpts(): RunOpts;

  /** What this scheduler supports. */
  abstract capabilities(): SchedulerCapabilities;

  /**
   * Pure translation of an app and resolved options into the native request. Must not call the backend and
   * must not modify `app`. `workspace`, when given, has passed {@link checkWorkspace}: the request must
   * lay its archive over the image and start the entrypoint in its root.
   */
  protected abstract translate(app: AppDef, cfg: Opts, workspace?: JobWorkspace): AppDryRunInfo<Request>;

  /**
   * Refuses a workspace this scheduler cannot take (the base: every workspace). A scheduler that takes one
   * overrides this to check the archive's location kind it can reach.
   *
   * @throws ValidationError naming `workspace`, before anything is recorded.
   */
  checkWorkspace(_workspace: JobWorkspace): void {
    throw ValidationError.forField(
      'workspace',
      `the ${this.backend} scheduler cannot take a workspace; run without one (txs run --workspace "")`,
    );
  }

  /**
   * The app id the request of `dryrun` will have once scheduled. Ids are fixed at dry-run time (they carry
   * the unique name suffix), so the runner records an app before submitting it and nothing submitted is
   * ever without a record.
   */
  abstract appIdOf(dryrun: AppDryRunInfo<Request>): string;

  /**
   * The name the backend knows the app by, as it appears in its state-change events (Batch job name,
   * SageMaker training job name). Defaults to the app id.
   */
  nativeNameOf(appId: string): string {
    return appId;
  }

  /** Submits a dry run's request and returns the scheduler's app id (the same as {@link appIdOf}). */
  abstract schedule(dryrun: AppDryRunInfo<Request>): Promise<string>;

  /** Describes an app; undefined when the scheduler does not know it (any more). */
  abstract describe(appId: string): Promise<DescribeAppResponse | undefined>;

  /**
   * Describes several apps at once (the reconciler, and local mode's follower), one result per id in the
   * same order. The base describes them a few at a time; a scheduler whose backend describes many jobs per
   * call (Batch's DescribeJobs) overrides it.
   */
  async describeMany(
    appIds: readonly string[],
  ): Promise<PromiseSettledResult<DescribeAppResponse | undefined>[]> {
    const results: PromiseSettledResult<DescribeAppResponse | undefined>[] = [];
    for (let i = 0; i < appIds.length; i += DESCRIBE_MANY_CONCURRENCY) {
      const ids = appIds.slice(i, i + DESCRIBE_MANY_CONCURRENCY);
      results.push(...(await Promise.allSettled(ids.map((appId) => this.describe(appId)))));
    }
    return results;
  }

  /** Lists apps this scheduler launched (used for reconciliation). */
  abstract list(): Promise<ListAppResponse[]>;

  /** Cancels an app known to exist. */
  protected abstract cancelExisting(appId: string, reason: string): Promise<void>;

  /**
   * Resolves `cfg` against {@link runOpts} and translates the app (TorchX `submit_dryrun`).
   *
   * @throws InvalidRunConfigError when an option is missing or has the wrong type.
   */
  submitDryrun(app: AppDef, cfg: Readonly<Cfg> = {}, workspace?: JobWorkspace): AppDryRunInfo<Request> {
    if (workspace !== undefined) this.checkWorkspace(workspace);
    const resolved = this.runOpts().resolve(cfg) as Opts;
    return this.translate(app, resolved, workspace);
  }

  /**
   * {@link validate} then {@link submitDryrun} of options already resolved (`runOpts().resolve(cfg)`): what
   * the Runner calls for a dry run or a run. A scheduler whose translation makes the same checks as its
   * `validate` overrides this to translate once (and need not resolve again).
   */
  validatedDryrun(app: AppDef, cfg: Readonly<Cfg>, workspace?: JobWorkspace): AppDryRunInfo<Request> {
    this.validate(app, cfg);
    return this.submitDryrun(app, cfg, workspace);
  }

  /** `submitDryrun` then `schedule` (mostly for tests; use the Runner). */
  async submit(app: AppDef, cfg: Readonly<Cfg> = {}): Promise<string> {
    this.validate(app, cfg);
    return this.schedule(this.submitDryrun(app, cfg));
  }

  /**
   * Checks that the app can run here before anything is sent. The base rejects roles without a resource,
   * with TorchX's hint; subclasses add their own rules (and call `super.validate`).
   *
   * @throws ValidationError naming the field.
   */
  validate(app: AppDef, _cfg: Readonly<Cfg> = {}): void {
    app.roles.forEach((role, i) => {
      if (isNullResource(role.resource)) {
        throw ValidationError.forField(
          `app.roles.${i}.resource`,
          `No resource for role: ${role.image}. Did you forget to attach resource to the role? ` +
            'Give a named resource such as "cpu.small" or {cpu, gpu, memMB}',
        );
      }
    });
  }

  /** True when the scheduler knows the app. */
  async exists(appId: string): Promise<boolean> {
    return (await this.describe(appId)) !== undefined;
  }

  /**
   * Cancels the app. Idempotent: a no-op for an unknown or already finished app.
   *
   * @param reason recorded with the backend where it accepts one.
   */
  async cancel(appId: string, reason = 'cancelled via torchx-serverless'): Promise<void> {
    const desc = await this.describe(appId);
    if (desc === undefined || isTerminal(desc.state)) return;
    await this.cancelExisting(appId, reason);
  }

  /**
   * Deletes the app from the scheduler's data plane (e.g. the Batch job definition), cancelling it first
   * if it is still live. A no-op for an unknown app.
   */
  async delete(appId: string): Promise<void> {
    if (await this.exists(appId)) await this.deleteExisting(appId);
  }

  /** Default delete: cancel (for schedulers without persistent definitions). */
  protected async deleteExisting(appId: string): Promise<void> {
    await this.cancel(appId, 'deleted via torchx-serverless');
  }

  /**
   * Reads one page of a replica's log. Subclasses that support logs override {@link fetchLogPage}; this
   * method applies the request's line filter to the page.
   *
   * @throws NotSupportedError when the scheduler has no log access.
   */
  async readLogs(appId: string, request: LogPageRequest): Promise<LogPage> {
    const page = await this.fetchLogPage(appId, request);
    return { ...page, lines: filterLines(page.lines, request.filter) };
  }

  /** Reads one unfiltered page of a replica's log; the base reports that logs are not supported. */
  protected async fetchLogPage(_appId: string, _request: LogPageRequest): Promise<LogPage> {
    throw new NotSupportedError(`${this.backend} does not support reading logs`);
  }

  /**
   * Iterates over a replica's log lines. With `tail`, follows the log (polling every `pollIntervalMs`) until
   * the app is terminal and every line is read.
   */
  async *logIter(appId: string, options: LogIterOptions): AsyncGenerator<string> {
    const pollIntervalMs = options.pollIntervalMs ?? 2_000;
    let nextToken: string | undefined;
    let finalRead = false;
    for (;;) {
      const request: LogPageRequest = { ...options };
      if (nextToken !== undefined) request.nextToken = nextToken;
      const page = await this.readLogs(appId, request);
      yield* page.lines;
      if (page.nextToken === undefined) return;
      nextToken = page.nextToken;
      if (!page.caughtUp) continue;
      if (!options.tail || finalRead) return;
      const desc = await this.describe(appId);
      if (desc === undefined || isTerminal(desc.state)) {
        finalRead = true; // read once more: lines written just before the end
        continue;
      }
      await this.sleep(pollIntervalMs);
    }
  }

  /** Frees local resources (local schedulers only); safe to call twice. */
  async close(): Promise<void> {}
}
