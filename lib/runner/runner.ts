/**
 * The Runner (port of TorchX's `torchx.runner.api.Runner`): validation → dry run → record → submit, and
 * status, wait, cancel, delete, describe, logs and list over app handles. Every submitted app has a record
 * written *before* the submission, so nothing runs without a record.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import { type ComponentContext, materializeComponent } from '../components/index.js';
import {
  BackendError,
  type LogIterOptions,
  type LogPage,
  type LogPageRequest,
  type Scheduler,
  type SchedulerCapabilities,
  type SchedulerRegistry,
} from '../schedulers/index.js';
import {
  type AppDef,
  type AppDryRunInfo,
  type AppHandle,
  type AppRecord,
  type AppStateTransition,
  AppStatus,
  type Cfg,
  cloneAppDef,
  DEFAULT_SESSION,
  isTerminal,
  type ListAppResponse,
  MISSING,
  macros,
  makeAppHandle,
  parseAppHandle,
  type RunOptDescription,
  type RunRequest,
  SECRET_CFG_KEYS,
  TxsError,
  UnknownAppError,
  ValidationError,
} from '../specs/index.js';
import {
  IdempotencyConflictError,
  IdempotencyInProgressError,
  SubmissionOutcomeUnknownError,
  WaitTimeoutError,
} from './errors.js';
import { type AppStateChangePublisher, NO_PUBLISHER } from './events.js';
import type { AppRecordStore, ListAppsPage, ListAppsQuery, TransitionOutcome } from './store.js';

/** The environment variable TorchX sets to the app's handle. */
export const TORCHX_JOB_ID_ENV = 'TORCHX_JOB_ID';

/** How the Runner is built. */
export interface RunnerOptions {
  schedulers: SchedulerRegistry;
  store: AppRecordStore;
  /** Default session name; `torchx` like TorchX. */
  sessionName?: string;
  /** Publishes every accepted transition (the normalized `AppState Change` event). */
  publisher?: AppStateChangePublisher;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  /** How long a duplicate request waits for the first one holding its Idempotency-Key (ms). */
  idempotencyWaitMs?: number;
  /** An UNSUBMITTED record the scheduler does not know after this long is marked FAILED (ms). */
  submitGraceMs?: number;
}

/** Who is asking, and how. */
export interface RequestContext {
  /** The caller's identity; recorded on new apps and checked on every other verb. */
  owner: string;
  /** Session for new handles; the runner's default otherwise. */
  session?: string;
  /** Makes `run` idempotent: the same key returns the same handle and submits nothing twice. */
  idempotencyKey?: string;
  /** Passed to components (e.g. the CLI's environment for LOGLEVEL). */
  componentContext?: ComponentContext;
}

/** What `run` returns. */
export interface RunResult {
  handle: AppHandle;
  record: AppRecord;
  /** False when an idempotent retry returned an earlier submission. */
  created: boolean;
}

/** One scheduler as `GET /v1/schedulers` shows it. */
export interface SchedulerDescription {
  name: string;
  capabilities: SchedulerCapabilities;
  runOpts: RunOptDescription[];
}

/**
 * What components may read of the caller's environment: the `env` run option a scheduler such as
 * `local_cwd` takes (`txs run` sends the caller's environment there), so `LOGLEVEL` reaches components.
 */
function callerContextOf(cfg: Readonly<Cfg>): ComponentContext {
  const env = cfg.env;
  if (env === null || env === undefined || typeof env !== 'object' || Array.isArray(env)) return {};
  return { env: env as Record<string, string> };
}

/**
 * `cfg` as the idempotency hash sees it: options that may hold secrets (the caller's `env`) count by their
 * names only, so no digest of a secret is stored with the idempotency key.
 */
function hashableCfg(cfg: Readonly<Cfg>): Cfg {
  const out: Cfg = { ...cfg };
  for (const key of SECRET_CFG_KEYS) {
    const value = out[key];
    if (value !== null && value !== undefined && typeof value === 'object' && !Array.isArray(value)) {
      out[key] = Object.keys(value).sort();
    }
  }
  return out;
}

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function stableStringify(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableStringify((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** Hash of a request's content, to recognise an Idempotency-Key reused for a different request. */
export function requestHash(value: unknown): string {
  return createHash('sha256').update(stableStringify(value)).digest('hex');
}

/**
 * Runs apps on registered schedulers and keeps their records.
 *
 * @example
 * ```ts
 * const runner = new Runner({ schedulers: registry, store });
 * const { handle } = await runner.runComponent('utils.echo', ['--msg', 'hi'], 'local_cwd', {}, { owner: 'me' });
 * const status = await runner.wait(handle, { intervalMs: 500 });
 * ```
 */
export class Runner {
  readonly sessionName: string;
  private readonly schedulers: SchedulerRegistry;
  private readonly store: AppRecordStore;
  private readonly publisher: AppStateChangePublisher;
  private readonly now: () => number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly idempotencyWaitMs: number;
  private readonly submitGraceMs: number;

  constructor(options: RunnerOptions) {
    this.schedulers = options.schedulers;
    this.store = options.store;
    this.sessionName = options.sessionName ?? DEFAULT_SESSION;
    this.publisher = options.publisher ?? NO_PUBLISHER;
    this.now = options.now ?? Date.now;
    this.sleep = options.sleep ?? realSleep;
    this.idempotencyWaitMs = options.idempotencyWaitMs ?? 20_000;
    this.submitGraceMs = options.submitGraceMs ?? 10 * 60_000;
  }

  // ---------------------------------------------------------------- schedulers

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
    return this.schedulers.names().map((name) => {
      const s = this.schedulers.get(name);
      return { name, capabilities: s.capabilities(), runOpts: s.runOpts().describe() };
    });
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

  // ---------------------------------------------------------------- dry run

  /**
   * Validates the app and returns the exact native request, without submitting anything. Rejects apps with
   * no roles, roles without an entrypoint and non-positive replicas (TorchX's messages), injects
   * `TORCHX_JOB_ID`, runs the scheduler's validation, then its dry run. A scheduler's `user` option (the
   * `torchx.pytorch.org/user` tag) defaults to the caller: the user or session name of an IAM `owner`.
   *
   * @throws ValidationError / InvalidRunConfigError / UnknownSchedulerError naming what to fix.
   */
  dryrun(
    app: AppDef,
    scheduler: string,
    cfg: Cfg = {},
    session = this.sessionName,
    owner?: string,
  ): AppDryRunInfo {
    const sched = this.schedulers.get(scheduler);
    if (app.roles.length === 0) {
      throw ValidationError.forField(
        'app.roles',
        `No roles for app: ${app.name}. Did you forget to add roles to AppDef?`,
      );
    }
    const prepared = cloneAppDef(app);
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
      role.env[TORCHX_JOB_ID_ENV] = makeAppHandle(scheduler, session, macros.appId);
    });
    const opts = sched.runOpts();
    const withUser =
      owner !== undefined && opts.get('user') !== undefined && (cfg.user === undefined || cfg.user === null)
        ? { ...cfg, user: userNameOf(owner) }
        : cfg;
    const resolved = opts.resolve(withUser);
    // A secret-bearing key the scheduler does not declare (the caller's `env` sent to aws_batch) is ignored
    // anyway (and warned about): drop it so its values are neither recorded nor echoed.
    for (const key of SECRET_CFG_KEYS) if (opts.get(key) === undefined) delete resolved[key];
    sched.validate(prepared, resolved);
    return sched.submitDryrun(prepared, resolved);
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
  ): AppDryRunInfo {
    this.schedulers.get(scheduler);
    return this.dryrun(
      materializeComponent(component, args, componentContext),
      scheduler,
      cfg,
      session,
      owner,
    );
  }

  /** Dry-runs a validated HTTP run request (an AppDef or a component) for `owner`. */
  dryrunRequest(
    request: RunRequest,
    owner?: string,
    componentContext: ComponentContext = callerContextOf(request.cfg),
  ): AppDryRunInfo {
    const session = request.session ?? this.sessionName;
    return request.app !== undefined
      ? this.dryrun(request.app, request.scheduler, request.cfg, session, owner)
      : this.dryrunComponent(
          request.component,
          request.args,
          request.scheduler,
          request.cfg,
          session,
          componentContext,
          owner,
        );
  }

  // ---------------------------------------------------------------- run

  /** Dry-runs then schedules an app. */
  async run(app: AppDef, scheduler: string, cfg: Cfg, ctx: RequestContext): Promise<RunResult> {
    const session = ctx.session ?? this.sessionName;
    return this.idempotently(ctx, { scheduler, session, cfg: hashableCfg(cfg), app }, () =>
      this.schedule(this.dryrun(app, scheduler, cfg, session, ctx.owner), ctx),
    );
  }

  /** Materializes a component, dry-runs it and schedules it. */
  async runComponent(
    component: string,
    args: readonly string[],
    scheduler: string,
    cfg: Cfg,
    ctx: RequestContext,
  ): Promise<RunResult> {
    const session = ctx.session ?? this.sessionName;
    return this.idempotently(ctx, { scheduler, session, cfg: hashableCfg(cfg), component, args }, () =>
      this.schedule(
        this.dryrunComponent(component, args, scheduler, cfg, session, ctx.componentContext, ctx.owner),
        ctx,
      ),
    );
  }

  /** Runs a validated HTTP run request (an AppDef or a component). */
  async runRequest(request: RunRequest, ctx: RequestContext): Promise<RunResult> {
    const withContext: RequestContext =
      ctx.componentContext === undefined ? { ...ctx, componentContext: callerContextOf(request.cfg) } : ctx;
    const withSession =
      request.session === undefined ? withContext : { ...withContext, session: request.session };
    return request.app !== undefined
      ? this.run(request.app, request.scheduler, request.cfg, withSession)
      : this.runComponent(request.component, request.args, request.scheduler, request.cfg, withSession);
  }

  /**
   * Submits a dry run: writes the record (UNSUBMITTED), submits, then records SUBMITTED. If the submission
   * fails the record is marked FAILED with the reason and the error is rethrown. If only the last write
   * fails, the job runs and the reconciler brings its record up to date.
   */
  async schedule(dryrun: AppDryRunInfo, ctx: RequestContext): Promise<RunResult> {
    const sched = this.schedulers.get(dryrun.scheduler);
    const session = ctx.session ?? this.sessionName;
    const appId = sched.appIdOf(dryrun);
    const handle = makeAppHandle(dryrun.scheduler, session, appId);
    const createdAt = this.now();
    const newRecord: Parameters<AppRecordStore['create']>[0] = {
      handle,
      scheduler: dryrun.scheduler,
      session,
      appId,
      nativeName: sched.nativeNameOf(appId),
      owner: ctx.owner,
      name: dryrun.app.name,
      app: dryrun.app,
      cfg: dryrun.cfg,
      state: 'UNSUBMITTED',
      createdAt,
      attempt: 0,
      lastEventTime: createdAt,
    };
    if (ctx.idempotencyKey !== undefined) newRecord.idempotencyKey = ctx.idempotencyKey;
    const { record } = await this.store.create(newRecord);
    try {
      await sched.schedule(dryrun);
    } catch (error) {
      // A timeout, a dropped connection or a 5xx may hide a submission the backend accepted: the record stays
      // UNSUBMITTED (non-terminal), so the reconciler finds the job by describe, or marks the record FAILED
      // once the submit grace period has passed without the scheduler knowing it.
      if (mayHaveReachedBackend(error)) throw new SubmissionOutcomeUnknownError(handle, error);
      await this.applyTransition(handle, {
        state: 'FAILED',
        eventTime: this.now(),
        attempt: 0,
        source: 'submit',
        reason: `submission failed: ${error instanceof Error ? error.message : String(error)}`,
      }).catch(() => undefined);
      throw error;
    }
    const outcome = await this.applyTransition(handle, {
      state: 'SUBMITTED',
      eventTime: this.now(),
      attempt: 0,
      source: 'submit',
    }).catch(() => undefined);
    const latest = outcome?.record ?? (await this.store.get(handle).catch(() => undefined)) ?? record;
    return { handle, record: latest, created: true };
  }

  private async idempotently(
    ctx: RequestContext,
    request: unknown,
    submit: () => Promise<RunResult>,
  ): Promise<RunResult> {
    const key = ctx.idempotencyKey;
    if (key === undefined) return submit();
    const hash = requestHash(request);
    const deadline = this.now() + this.idempotencyWaitMs;
    for (;;) {
      const reservation = await this.store.reserveIdempotencyKey(ctx.owner, key, hash, this.now());
      if (reservation.reserved) break;
      if (reservation.requestHash !== hash) throw new IdempotencyConflictError(key);
      if (reservation.handle !== undefined) {
        const record = await this.store.get(reservation.handle);
        if (record) return { handle: record.handle, record, created: false };
      }
      if (this.now() >= deadline) throw new IdempotencyInProgressError(key);
      await this.sleep(50);
    }
    try {
      const result = await submit();
      await this.store.completeIdempotencyKey(ctx.owner, key, result.handle);
      return result;
    } catch (error) {
      if (error instanceof SubmissionOutcomeUnknownError) {
        // The job may exist: bind the key to its record so a retry cannot submit it a second time.
        await this.store.completeIdempotencyKey(ctx.owner, key, error.handle).catch(() => undefined);
      } else {
        await this.store.releaseIdempotencyKey(ctx.owner, key).catch(() => undefined);
      }
      throw error;
    }
  }

  // ---------------------------------------------------------------- records and status

  /**
   * The app's record. With `owner`, another owner's app is reported as unknown (404, not 403: handles are
   * not secrets, but existence is not leaked either).
   *
   * @throws UnknownAppError when there is no such app for this owner.
   */
  async get(handle: AppHandle, owner?: string): Promise<AppRecord> {
    parseAppHandle(handle);
    const record = await this.store.get(handle);
    if (!record || (owner !== undefined && record.owner !== owner)) throw new UnknownAppError(handle);
    return record;
  }

  /**
   * The app's status from its record; with `refresh`, asks the scheduler first and applies what it says.
   *
   * @throws UnknownAppError when there is no such app for this owner.
   */
  async status(handle: AppHandle, options: { owner?: string; refresh?: boolean } = {}): Promise<AppStatus> {
    const record = options.refresh
      ? await this.refresh(handle, options.owner)
      : await this.get(handle, options.owner);
    return statusOfRecord(record);
  }

  /**
   * Asks the scheduler for the app's state and applies it as a transition (a no-op unless it moves the
   * app forward). An UNSUBMITTED record the scheduler does not know is marked FAILED after a grace period.
   */
  async refresh(handle: AppHandle, owner?: string): Promise<AppRecord> {
    const record = await this.get(handle, owner);
    if (isTerminal(record.state)) return record;
    const sched = this.schedulers.get(record.scheduler);
    const desc = await sched.describe(record.appId);
    if (desc === undefined) {
      if (record.state === 'UNSUBMITTED' && this.now() - record.createdAt > this.submitGraceMs) {
        const outcome = await this.applyTransition(handle, {
          state: 'FAILED',
          eventTime: this.now(),
          attempt: record.attempt,
          source: 'describe',
          reason: 'the app never reached the scheduler (submission interrupted)',
        });
        return outcome.record ?? record;
      }
      return record;
    }
    const transition: AppStateTransition = {
      state: desc.state,
      eventTime: desc.updatedAt ?? this.now(),
      attempt: desc.attempt ?? record.attempt,
      source: 'describe',
      roles: desc.rolesStatuses,
    };
    if (desc.msg && desc.msg !== '<NONE>') transition.reason = desc.msg;
    if (desc.numRestarts >= 0) transition.numRestarts = desc.numRestarts;
    if (desc.uiUrl !== undefined) transition.uiUrl = desc.uiUrl;
    const outcome = await this.applyTransition(handle, transition, record);
    return outcome.record ?? record;
  }

  /**
   * Applies a transition to a record and publishes the normalized event when it is accepted. The single
   * path for submissions, EventBridge events, local scheduler events, refreshes and the reconciler.
   */
  async applyTransition(
    handle: AppHandle,
    transition: AppStateTransition,
    current?: AppRecord,
  ): Promise<TransitionOutcome> {
    const outcome = await this.store.transition(handle, transition, current);
    if (outcome.applied && outcome.previous !== outcome.record.state) {
      const r = outcome.record;
      const event: Parameters<AppStateChangePublisher['publish']>[0] = {
        handle: r.handle,
        scheduler: r.scheduler,
        appId: r.appId,
        owner: r.owner,
        session: r.session,
        name: r.name,
        from: outcome.previous,
        to: r.state,
        time: new Date(transition.eventTime).toISOString(),
        source: transition.source,
      };
      if (transition.reason !== undefined) event.reason = transition.reason;
      await this.publisher.publish(event);
    }
    return outcome;
  }

  /**
   * Routes a scheduler-native transition (an EventBridge event, a local process exit) to the app's record.
   *
   * @returns undefined when the app was not launched by us (no record): such events are ignored.
   */
  async applyNativeTransition(
    scheduler: string,
    nativeName: string,
    transition: AppStateTransition,
  ): Promise<TransitionOutcome | undefined> {
    const record = await this.store.findByNativeName(scheduler, nativeName);
    if (!record) return undefined;
    return this.applyTransition(record.handle, transition, record);
  }

  /**
   * Waits until the app is terminal, polling every `intervalMs` (default 10 s, like TorchX). By default each
   * poll asks the scheduler (`refresh`); pass `refresh: false` when events keep the record current.
   *
   * @throws WaitTimeoutError when `timeoutMs` passes first.
   */
  async wait(
    handle: AppHandle,
    options: { intervalMs?: number; timeoutMs?: number; refresh?: boolean; owner?: string } = {},
  ): Promise<AppStatus> {
    const intervalMs = options.intervalMs ?? 10_000;
    const start = this.now();
    for (;;) {
      const status = await this.status(handle, { refresh: options.refresh ?? true, ...ownerOf(options) });
      if (status.isTerminal()) return status;
      if (options.timeoutMs !== undefined && this.now() - start >= options.timeoutMs) {
        throw new WaitTimeoutError(handle, status.state, options.timeoutMs);
      }
      await this.sleep(intervalMs);
    }
  }

  /** The AppDef as submitted (TorchX `describe`). */
  async describe(handle: AppHandle, owner?: string): Promise<AppDef> {
    return (await this.get(handle, owner)).app;
  }

  // ---------------------------------------------------------------- cancel / delete

  /**
   * Asks the scheduler to cancel the app. Idempotent: a no-op for a terminal app. The record moves to
   * CANCELLED when the scheduler reports it.
   */
  async cancel(
    handle: AppHandle,
    owner?: string,
    reason = 'cancelled via torchx-serverless',
  ): Promise<AppRecord> {
    const record = await this.get(handle, owner);
    if (isTerminal(record.state)) return record;
    await this.store.markCancelRequested(handle, this.now());
    await this.schedulers.get(record.scheduler).cancel(record.appId, reason);
    return (await this.store.get(handle)) ?? record;
  }

  /** Deletes the app from the scheduler's data plane (cancelling it if live). The record is kept. */
  async delete(handle: AppHandle, owner?: string): Promise<AppRecord> {
    const record = await this.get(handle, owner);
    if (!isTerminal(record.state)) await this.store.markCancelRequested(handle, this.now());
    await this.schedulers.get(record.scheduler).delete(record.appId);
    return (await this.store.get(handle)) ?? record;
  }

  // ---------------------------------------------------------------- logs

  /** One page of a replica's log. An empty `role` means the app's first role. */
  async readLogs(handle: AppHandle, request: LogPageRequest, owner?: string): Promise<LogPage> {
    const record = await this.get(handle, owner);
    const role = request.role || record.app.roles[0]?.name || '';
    return this.schedulers.get(record.scheduler).readLogs(record.appId, { ...request, role });
  }

  /** Iterates a replica's log lines (TorchX `log_lines`); `tail` follows until the app is terminal. */
  async *logLines(handle: AppHandle, options: LogIterOptions, owner?: string): AsyncGenerator<string> {
    const record = await this.get(handle, owner);
    yield* this.schedulers.get(record.scheduler).logIter(record.appId, options);
  }

  // ---------------------------------------------------------------- list

  /** An owner's apps from the store, newest first. */
  async list(query: ListAppsQuery): Promise<ListAppsPage> {
    return this.store.list(query);
  }

  /** What the scheduler itself lists, with handles (TorchX `list`). */
  async listFromScheduler(scheduler: string): Promise<ListAppResponse[]> {
    const apps = await this.schedulers.get(scheduler).list();
    return apps.map((a) => ({ ...a, appHandle: makeAppHandle(scheduler, this.sessionName, a.appId) }));
  }

  /**
   * Refreshes every non-terminal record of `scheduler` from the scheduler, so a lost event cannot leave an
   * app RUNNING forever.
   *
   * @returns how many records were checked and how many changed.
   */
  async reconcile(scheduler: string): Promise<{ checked: number; changed: number; errors: number }> {
    let nextToken: string | undefined;
    let checked = 0;
    let changed = 0;
    let errors = 0;
    do {
      const page = await this.store.listActive(scheduler, 100, nextToken);
      for (const record of page.records) {
        checked += 1;
        try {
          const after = await this.refresh(record.handle);
          if (after.state !== record.state || after.lastEventTime !== record.lastEventTime) changed += 1;
        } catch {
          errors += 1;
        }
      }
      nextToken = page.nextToken;
    } while (nextToken !== undefined);
    return { checked, changed, errors };
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

/**
 * True when a failed submission may still have been accepted by the backend: a retryable backend error
 * (timeouts, network failures, 5xx, throttling past the SDK's retries) or an error that is not ours at all.
 * Rejections that certainly submitted nothing (validation, access denied, quotas, conflicts) are false.
 */
export function mayHaveReachedBackend(error: unknown): boolean {
  if (error instanceof BackendError) return error.retryable;
  return !(error instanceof TxsError);
}

/**
 * A short user name for an owner: the last path segment of an IAM ARN (`arn:aws:iam::1:user/alice` → `alice`,
 * an assumed role's session name), the owner itself otherwise.
 */
export function userNameOf(owner: string): string {
  return owner.startsWith('arn:') ? owner.slice(owner.lastIndexOf('/') + 1) || owner : owner;
}

function ownerOf(options: { owner?: string }): { owner?: string } {
  return options.owner === undefined ? {} : { owner: options.owner };
}

/** The AppStatus a record stands for. */
export function statusOfRecord(record: AppRecord): AppStatus {
  const init: ConstructorParameters<typeof AppStatus>[0] = {
    state: record.state,
    numRestarts: record.numRestarts,
    msg: record.reason ?? '',
    roles: record.roles,
  };
  if (record.uiUrl !== undefined) init.uiUrl = record.uiUrl;
  return new AppStatus(init);
}
