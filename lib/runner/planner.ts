/**
 * The Planner: the Runner's validation and dry runs over a scheduler registry, with no record store. The
 * Runner extends it; the dry-run and scheduler-listing functions use it alone, over schedulers that only
 * translate (no SDK client, no DynamoDB).
 *
 * @module
 */
import { type ComponentContext, materializeComponent } from '../components/index.js';
import type { Scheduler, SchedulerDescription, SchedulerRegistry } from '../schedulers/index.js';
import {
  ALLOW_ALL_HOST_ACCESS,
  type AppDef,
  type AppDryRunInfo,
  type Cfg,
  checkHostAccess,
  cloneAppDef,
  DEFAULT_SESSION,
  type HostAccessPolicy,
  type HostAccessSettingNames,
  type JobWorkspace,
  MAX_REPLICAS,
  MISSING,
  macros,
  makeAppHandle,
  type RunRequest,
  SECRET_CFG_KEYS,
  ValidationError,
} from '../specs/index.js';

/** The environment variable TorchX sets to the app's handle. */
export const TORCHX_JOB_ID_ENV = 'TORCHX_JOB_ID';

/** How a Planner is built. */
export interface PlannerOptions {
  schedulers: SchedulerRegistry;
  /** Default session name; `torchx` like TorchX. */
  sessionName?: string;
  /**
   * Host access apps may ask for (privileged containers, host bind mounts, devices), checked on every dry run
   * and run before anything is written. Default: everything (library use; the deployed functions pass theirs).
   */
  hostAccess?: HostAccessPolicy;
  /** Names of the deployment settings that widen `hostAccess`, quoted in refusals. */
  hostAccessSettings?: HostAccessSettingNames;
}

/**
 * What components may read of the caller's environment: the `env` run option a scheduler such as
 * `local_cwd` takes (`txs run` sends the caller's environment there), so `LOGLEVEL` reaches components.
 */
export function callerContextOf(cfg: Readonly<Cfg>): ComponentContext {
  const env = cfg.env;
  if (env === null || env === undefined || typeof env !== 'object' || Array.isArray(env)) return {};
  return { env: env as Record<string, string> };
}

/**
 * A short user name for an owner: the last path segment of an IAM ARN (`arn:aws:iam::1:user/alice` → `alice`,
 * an assumed role's session name), the owner itself otherwise.
 */
export function userNameOf(owner: string): string {
  return owner.startsWith('arn:') ? owner.slice(owner.lastIndexOf('/') + 1) || owner : owner;
}

/**
 * Validates apps and dry-runs them on registered schedulers (TorchX `Runner.dryrun`); submits nothing and
 * keeps no records.
 *
 * @example
 * ```ts
 * const planner = new Planner({ schedulers: registry });
 * const info = planner.dryrunComponent('dist.ddp', ['-j', '2x8', '--script', 'train.py'], 'aws_batch', { queue: 'q' });
 * ```
 */
export class Planner {
  readonly sessionName: string;
  protected readonly schedulers: SchedulerRegistry;
  private readonly hostAccess: HostAccessPolicy;
  private readonly hostAccessSettings: HostAccessSettingNames | undefined;

  constructor(options: PlannerOptions) {
    this.schedulers = options.schedulers;
    this.sessionName = options.sessionName ?? DEFAULT_SESSION;
    this.hostAccess = options.hostAccess ?? ALLOW_ALL_HOST_ACCESS;
    this.hostAccessSettings = options.hostAccessSettings;
  }

  /** Registered scheduler names (TorchX `scheduler_backends`). */
  schedulerBackends(): string[] {
    return this.schedulers.names();
  }

  /** The run options of a scheduler (TorchX `scheduler_run_opts`). */
  schedulerRunOpts(scheduler: string) {
    return this.schedulers.get(scheduler).runOpts();
  }

  /** Every scheduler with its capabilities and run options. */
  describeSchedulers(): SchedulerDescription[] {
    return this.schedulers.describe();
  }

  /**
   * Warnings for a run request's `cfg`: each key that is not a run option of its scheduler, with the
   * closest option names (the key is ignored, as TorchX does).
   *
   * @throws UnknownSchedulerError when the scheduler is not registered.
   */
  cfgWarnings(scheduler: string, cfg: Readonly<Cfg>): string[] {
    return this.schedulers.get(scheduler).runOpts().unknownKeyWarnings(cfg, scheduler);
  }

  /**
   * Validates the app and returns the exact native request, without submitting anything. Rejects apps with
   * no roles, roles without an entrypoint and non-positive replicas (TorchX's messages), injects
   * `TORCHX_JOB_ID`, runs the scheduler's validation, then its dry run. A scheduler's `user` option (the
   * `torchx.pytorch.org/user` tag) defaults to the caller: the user or session name of an IAM `owner`.
   *
   * @throws HostAccessDeniedError when the app asks for host access the runner's policy does not allow.
   * @throws ValidationError / InvalidRunConfigError / UnknownSchedulerError naming what to fix.
   */
  dryrun(
    app: AppDef,
    scheduler: string,
    cfg: Cfg = {},
    session = this.sessionName,
    owner?: string,
    workspace?: JobWorkspace,
  ): AppDryRunInfo {
    return this.dryrunOwned(cloneAppDef(app), scheduler, cfg, session, owner, workspace);
  }

  /** {@link dryrun} of an app this Planner owns (a copy, or a component it just materialized): changed in place. */
  private dryrunOwned(
    prepared: AppDef,
    scheduler: string,
    cfg: Cfg,
    session: string,
    owner: string | undefined,
    workspace: JobWorkspace | undefined,
  ): AppDryRunInfo {
    const sched = this.schedulers.get(scheduler);
    if (prepared.roles.length === 0) {
      throw ValidationError.forField(
        'app.roles',
        `No roles for app: ${prepared.name}. Did you forget to add roles to AppDef?`,
      );
    }
    prepared.roles.forEach((role, i) => {
      if (!role.entrypoint || role.entrypoint === MISSING) {
        throw ValidationError.forField(
          `app.roles.${i}.entrypoint`,
          `No entrypoint for role: ${role.name}. Set the command the role runs (e.g. "python")`,
        );
      }
      if (role.numReplicas <= 0) {
        throw ValidationError.forField(
          `app.roles.${i}.numReplicas`,
          `Non-positive replicas for role: ${role.name}. Did you forget to set role.num_replicas?`,
        );
      }
      if (role.numReplicas > MAX_REPLICAS) {
        throw ValidationError.forField(
          `app.roles.${i}.numReplicas`,
          `${role.numReplicas} replicas for role ${role.name}: at most ${MAX_REPLICAS} per role`,
        );
      }
      role.env[TORCHX_JOB_ID_ENV] = makeAppHandle(scheduler, session, macros.appId);
    });
    const opts = sched.runOpts();
    // The caller's own name is the `user` a scheduler tags the job with, unless the caller gave one.
    const callerDefaults =
      owner !== undefined && opts.get('user') !== undefined ? { user: userNameOf(owner) } : {};
    const resolved = opts.resolve(cfg, callerDefaults);
    checkHostAccess(prepared, resolved, this.hostAccess, this.hostAccessSettings);
    // A secret-bearing key the scheduler does not declare (the caller's `env` sent to aws_batch) is ignored
    // anyway (and warned about): drop it so its values are neither recorded nor echoed.
    for (const key of SECRET_CFG_KEYS) if (opts.get(key) === undefined) delete resolved[key];
    return sched.validatedDryrun(prepared, resolved, workspace);
  }

  /** Materializes a builtin component from CLI-style arguments and dry-runs it. */
  dryrunComponent(
    component: string,
    args: readonly string[],
    scheduler: string,
    cfg: Cfg = {},
    session = this.sessionName,
    componentContext: ComponentContext = {},
    owner?: string,
    workspace?: JobWorkspace,
  ): AppDryRunInfo {
    this.schedulers.get(scheduler);
    // A freshly materialized app belongs to no one else: no copy needed.
    return this.dryrunOwned(
      materializeComponent(component, args, componentContext),
      scheduler,
      cfg,
      session,
      owner,
      workspace,
    );
  }

  /**
   * Dry-runs a validated HTTP run request (an AppDef or a component) for `owner`, with the workspace its
   * `workspace` reference was resolved to (the scheduler's request then fetches the archive).
   */
  dryrunRequest(
    request: RunRequest,
    owner?: string,
    workspace?: JobWorkspace,
    componentContext: ComponentContext = callerContextOf(request.cfg),
  ): AppDryRunInfo {
    const session = request.session ?? this.sessionName;
    return request.app !== undefined
      ? this.dryrun(request.app, request.scheduler, request.cfg, session, owner, workspace)
      : this.dryrunComponent(
          request.component,
          request.args,
          request.scheduler,
          request.cfg,
          session,
          componentContext,
          owner,
          workspace,
        );
  }

  /** Closes every scheduler created so far (local schedulers stop their processes). */
  async close(): Promise<void> {
    await this.schedulers.close();
  }

  /** The scheduler instance for `name` (for wiring that needs backend specifics). */
  scheduler(name: string): Scheduler {
    return this.schedulers.get(name);
  }
}
