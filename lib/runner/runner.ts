/**
 * The Runner (port of TorchX's `torchx.runner.api.Runner`): validation → dry run → record → submit, and
 * status, wait, cancel, delete, describe, logs and list over app handles. Every submitted app has a record
 * written *before* the submission, so nothing runs without a record.
 *
 * @module
 */
import type { ComponentContext } from '../components/index.js';
import { BackendError, type LogIterOptions, type LogPage, type LogPageRequest } from '../schedulers/index.js';
import {
  type ApiErrorCode,
  type AppDef,
  type AppDryRunInfo,
  type AppHandle,
  type AppRecord,
  type AppStateTransition,
  type AppStatus,
  BACKEND_TEXT_CODES,
  type Cfg,
  type DescribeAppResponse,
  isTerminal,
  type JobWorkspace,
  type ListAppResponse,
  makeAppHandle,
  type NewAppRecord,
  type RunRequest,
  sleep,
  TxsError,
} from '../specs/index.js';
import { AppRecords, statusOfRecord } from './app-records.js';
import { SubmissionOutcomeUnknownError, WaitTimeoutError } from './errors.js';
import { hashableCfg, IdempotencyHandler, type RunResult, requestHash } from './idempotency.js';
import { callerContextOf, Planner, type PlannerOptions } from './planner.js';
import type {
  AppCounts,
  AppRecordStore,
  CountAppsQuery,
  IdempotencyRejection,
  ListAppsPage,
  ListAppsQuery,
  TransitionOutcome,
} from './store.js';

/** How the Runner is built: a {@link Planner}'s options, the record store and timings. */
export interface RunnerOptions extends PlannerOptions {
  store: AppRecordStore;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  /** How long a duplicate request waits for the first one holding its Idempotency-Key (ms). */
  idempotencyWaitMs?: number;
  /** An UNSUBMITTED record the scheduler does not know after this long is marked FAILED (ms). */
  submitGraceMs?: number;
  /**
   * Lease of an Idempotency-Key reservation when the request gives no `leaseUntil` (ms; default 30 s, the
   * API functions' timeout): after it, a retry may take over the reservation of a crashed request.
   */
  idempotencyLeaseMs?: number;
  /**
   * Waits before looking a native name up again when the name index does not have the record yet (ms;
   * default 250, 750, 2000).
   */
  lateIndexDelaysMs?: readonly number[];
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
  /**
   * Epoch ms by which `run` must answer: a submission still in flight then answers
   * `SubmissionOutcomeUnknownError` with the handle (the reconciler settles the record).
   */
  deadline?: number;
  /** Epoch ms when this request's process is stopped at the latest (its idempotency lease ends then). */
  leaseUntil?: number;
  /** The workspace the app runs in: passed to the scheduler, and its summary recorded next to the image. */
  workspace?: JobWorkspace;
}

/** The part of a run request's identity (for its Idempotency-Key) that its workspace adds: the archive's hash. */
function workspaceOf(ctx: RequestContext): { workspace?: string } {
  return ctx.workspace === undefined ? {} : { workspace: ctx.workspace.sha256 };
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
export class Runner extends Planner {
  private readonly store: AppRecordStore;
  private readonly records: AppRecords;
  private readonly now: () => number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly idempotencyWaitMs: number;
  private readonly submitGraceMs: number;
  private readonly idempotencyLeaseMs: number;
  private readonly idempotency: IdempotencyHandler;

  constructor(options: RunnerOptions) {
    super(options);
    this.store = options.store;
    this.now = options.now ?? Date.now;
    this.sleep = options.sleep ?? sleep;
    this.records = new AppRecords({
      store: options.store,
      sessionName: this.sessionName,
      sleep: this.sleep,
      ...(options.lateIndexDelaysMs === undefined ? {} : { lateIndexDelaysMs: options.lateIndexDelaysMs }),
    });
    this.idempotencyWaitMs = options.idempotencyWaitMs ?? 20_000;
    this.submitGraceMs = options.submitGraceMs ?? 10 * 60_000;
    this.idempotencyLeaseMs = options.idempotencyLeaseMs ?? 30_000;
    this.idempotency = new IdempotencyHandler({ store: this.store, now: this.now, sleep: this.sleep });
  }

  // ---------------------------------------------------------------- run

  /** Dry-runs then schedules an app. */
  async run(app: AppDef, scheduler: string, cfg: Cfg, ctx: RequestContext): Promise<RunResult> {
    const session = ctx.session ?? this.sessionName;
    // Pure work first: a request that cannot run costs no write.
    const dryrun = this.dryrun(app, scheduler, cfg, session, ctx.owner, ctx.workspace);
    return this.submit(dryrun, ctx, { scheduler, session, cfg: hashableCfg(cfg), app, ...workspaceOf(ctx) });
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
    const dryrun = this.dryrunComponent(
      component,
      args,
      scheduler,
      cfg,
      session,
      ctx.componentContext,
      ctx.owner,
      ctx.workspace,
    );
    return this.submit(dryrun, ctx, {
      scheduler,
      session,
      cfg: hashableCfg(cfg),
      component,
      args,
      ...workspaceOf(ctx),
    });
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
   * fails the record is marked FAILED with the reason and the error is rethrown. A submission still in
   * flight at `ctx.deadline`, or one that failed in a way that may hide an accepted job, answers
   * {@link SubmissionOutcomeUnknownError} with the handle: the record stays UNSUBMITTED for the reconciler.
   * If only the last write fails, the job runs and the reconciler brings its record up to date.
   */
  async schedule(dryrun: AppDryRunInfo, ctx: RequestContext): Promise<RunResult> {
    return this.scheduleAs(this.newRecordOf(dryrun, ctx), dryrun, ctx);
  }

  /** The record a dry run will be submitted under (pure: names the handle before anything is written). */
  private newRecordOf(dryrun: AppDryRunInfo, ctx: RequestContext): NewAppRecord {
    const sched = this.schedulers.get(dryrun.scheduler);
    const session = ctx.session ?? this.sessionName;
    const appId = sched.appIdOf(dryrun);
    const createdAt = this.now();
    const record: NewAppRecord = {
      handle: makeAppHandle(dryrun.scheduler, session, appId),
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
    if (ctx.idempotencyKey !== undefined) record.idempotencyKey = ctx.idempotencyKey;
    if (ctx.workspace !== undefined) {
      const { sha256, size, fileCount } = ctx.workspace;
      record.workspace = { sha256, size, fileCount };
    }
    return record;
  }

  /**
   * {@link schedule} under `newRecord`. `onRejected` runs when the scheduler refused the submission, after
   * the record is marked FAILED and before the error is rethrown.
   */
  private async scheduleAs(
    newRecord: NewAppRecord,
    dryrun: AppDryRunInfo,
    ctx: RequestContext,
    onRejected?: (error: TxsError) => Promise<void>,
  ) {
    const sched = this.schedulers.get(dryrun.scheduler);
    const handle = newRecord.handle;
    const { record } = await this.store.records.create(newRecord);
    try {
      await this.withinDeadline(sched.schedule(dryrun), ctx.deadline, handle);
    } catch (error) {
      // A timeout, a dropped connection, a 5xx or our own deadline may hide a submission the backend
      // accepted: the record stays UNSUBMITTED (non-terminal), so the reconciler finds the job by describe,
      // or marks the record FAILED once the submit grace period has passed without the scheduler knowing it.
      if (error instanceof SubmissionOutcomeUnknownError) throw error;
      if (mayHaveReachedBackend(error)) throw new SubmissionOutcomeUnknownError(handle, error);
      const failed: AppStateTransition = {
        state: 'FAILED',
        eventTime: this.now(),
        attempt: 0,
        source: 'submit',
        reason: `submission failed: ${submissionFailure(error)}`,
      };
      // The rejection is what the caller must see, even if recording it fails: the record then stays
      // UNSUBMITTED and the reconciler marks it FAILED after the submit grace period (the scheduler does not
      // know the app), so nothing is lost by not surfacing the second error.
      await this.applyTransition(handle, failed, record).catch(() => undefined);
      if (error instanceof TxsError) await onRejected?.(error);
      throw error;
    }
    try {
      // From the record just created: one conditional UpdateItem, no read (if an event moved it meanwhile,
      // the versioned write fails and the store reads once).
      const submitted: AppStateTransition = {
        state: 'SUBMITTED',
        eventTime: this.now(),
        attempt: 0,
        source: 'submit',
      };
      const outcome = await this.applyTransition(handle, submitted, record);
      return { handle, record: outcome.record ?? record, created: true };
    } catch {
      // The job was accepted: answering an error would invite a second submission. The record stays
      // UNSUBMITTED and the reconciler (or the next refresh) moves it forward from the scheduler's answer.
      return { handle, record, created: true };
    }
  }

  /** Rejects with {@link SubmissionOutcomeUnknownError} when `work` is still running at `deadline`. */
  private async withinDeadline<T>(work: Promise<T>, deadline: number | undefined, handle: AppHandle) {
    if (deadline === undefined) return work;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new SubmissionOutcomeUnknownError(
              handle,
              new Error('the scheduler had not answered by the request deadline'),
            ),
          ),
        Math.max(0, deadline - this.now()),
      );
    });
    try {
      return await Promise.race([work, expired]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Submits `dryrun`, once per Idempotency-Key when the request has one ({@link IdempotencyHandler}). */
  private async submit(dryrun: AppDryRunInfo, ctx: RequestContext, request: unknown): Promise<RunResult> {
    const newRecord = this.newRecordOf(dryrun, ctx);
    const key = ctx.idempotencyKey;
    if (key === undefined) return this.scheduleAs(newRecord, dryrun, ctx);
    const handle = newRecord.handle;
    return this.idempotency.handle({
      owner: ctx.owner,
      key,
      requestHash: requestHash({ owner: ctx.owner, request }),
      handle,
      leaseUntil: ctx.leaseUntil ?? this.now() + this.idempotencyLeaseMs,
      waitUntil: Math.min(this.now() + this.idempotencyWaitMs, ctx.deadline ?? Number.POSITIVE_INFINITY),
      submit: (onRejected) => this.scheduleAs(newRecord, dryrun, ctx, onRejected),
      settleAbandoned: (earlier) => this.settleAbandoned(earlier, handle),
      rejectionOf,
    });
  }

  /**
   * The earlier holder of a reservation this request took over (it crashed or timed out mid-submit): its
   * record if it reached the scheduler (or was settled by the reconciler); undefined when it never did, in
   * which case its record is marked FAILED and the caller submits its own dry run.
   */
  private async settleAbandoned(earlier: AppHandle, successor: AppHandle): Promise<AppRecord | undefined> {
    if (earlier === successor) return undefined;
    const record = await this.store.records.get(earlier);
    if (!record) return undefined;
    if (record.state !== 'UNSUBMITTED') return record;
    const refreshed = await this.refresh(earlier);
    if (refreshed.state !== 'UNSUBMITTED') return refreshed;
    await this.applyTransition(earlier, {
      state: 'FAILED',
      eventTime: this.now(),
      attempt: record.attempt,
      source: 'submit',
      reason: `the submission was interrupted before it reached the scheduler; retried as ${successor}`,
    });
    return undefined;
  }

  // ---------------------------------------------------------------- records and status

  /**
   * The app's record ({@link AppRecords.get}).
   *
   * @throws UnknownAppError when there is no such app for this owner.
   */
  async get(handle: AppHandle, owner?: string): Promise<AppRecord> {
    return this.records.get(handle, owner);
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
    const desc = await this.schedulers.get(record.scheduler).describe(record.appId);
    return this.applyDescription(record, desc);
  }

  /**
   * Applies what the scheduler said of a record's app (`undefined`: it does not know it) as a transition:
   * the one path of a refresh and of the reconciler.
   */
  private async applyDescription(
    record: AppRecord,
    desc: DescribeAppResponse | undefined,
  ): Promise<AppRecord> {
    const handle = record.handle;
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
    if (desc.stateReason !== undefined) transition.stateReason = desc.stateReason;
    if (desc.attemptOutcomes !== undefined) transition.attemptOutcomes = desc.attemptOutcomes;
    const outcome = await this.applyTransition(handle, transition, record);
    return outcome.record ?? record;
  }

  /** Applies a transition to a record ({@link AppRecords.applyTransition}). */
  async applyTransition(
    handle: AppHandle,
    transition: AppStateTransition,
    current?: AppRecord,
  ): Promise<TransitionOutcome> {
    return this.records.applyTransition(handle, transition, current);
  }

  /**
   * Routes a scheduler-native transition to the app's record ({@link AppRecords.applyNativeTransition}).
   *
   * @returns undefined when the app was not launched by us (no record): such events are ignored.
   */
  async applyNativeTransition(
    ...args: Parameters<AppRecords['applyNativeTransition']>
  ): Promise<TransitionOutcome | undefined> {
    return this.records.applyNativeTransition(...args);
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
    await this.store.records.markCancelRequested(handle, this.now());
    await this.schedulers.get(record.scheduler).cancel(record.appId, reason);
    return (await this.store.records.get(handle)) ?? record;
  }

  /** Deletes the app from the scheduler's data plane (cancelling it if live). The record is kept. */
  async delete(handle: AppHandle, owner?: string): Promise<AppRecord> {
    const record = await this.get(handle, owner);
    if (!isTerminal(record.state)) await this.store.records.markCancelRequested(handle, this.now());
    await this.schedulers.get(record.scheduler).delete(record.appId);
    return (await this.store.records.get(handle)) ?? record;
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
    return this.records.list(query);
  }

  /** How many of an owner's apps are in each state, from the store (at most `APP_COUNT_CAP` records read). */
  async countByState(query: CountAppsQuery): Promise<AppCounts> {
    return this.records.countByState(query);
  }

  /** What the scheduler itself lists, with handles (TorchX `list`). */
  async listFromScheduler(scheduler: string): Promise<ListAppResponse[]> {
    const apps = await this.schedulers.get(scheduler).list();
    return apps.map((a) => ({ ...a, appHandle: makeAppHandle(scheduler, this.sessionName, a.appId) }));
  }

  /**
   * Refreshes every non-terminal record of `scheduler` from the scheduler, so a lost event cannot leave an
   * app RUNNING forever: a page of up to 100 records at a time, described together (`describeMany`), each
   * answer applied as a refresh would. The deployed reconciler runs it on a schedule; local mode's follower
   * runs it every few seconds for the AWS-backed schedulers.
   *
   * @returns how many records were checked, how many changed, and how many could not be described or
   *   updated.
   */
  async reconcile(scheduler: string): Promise<{ checked: number; changed: number; errors: number }> {
    let nextToken: string | undefined;
    let checked = 0;
    let changed = 0;
    let errors = 0;
    do {
      const page = await this.store.queries.listActive(scheduler, 100, nextToken);
      // One batched describe per page (Batch: DescribeJobs of up to 100 jobs), then one transition each.
      const described =
        page.records.length === 0
          ? []
          : await this.schedulers
              .get(scheduler)
              .describeMany(page.records.map((record) => record.appId))
              .catch((error: unknown) =>
                page.records.map(() => ({ status: 'rejected', reason: error }) as const),
              );
      for (const [i, record] of page.records.entries()) {
        checked += 1;
        const desc = described[i];
        if (desc === undefined || desc.status === 'rejected') {
          errors += 1;
          continue;
        }
        try {
          // An app the scheduler does not know goes through a refresh: it reads the record again before
          // deciding that a submission was interrupted (the listing may be behind).
          const after =
            desc.value === undefined
              ? await this.refresh(record.handle)
              : await this.applyDescription(record, desc.value);
          if (after.state !== record.state || after.lastEventTime !== record.lastEventTime) changed += 1;
        } catch {
          errors += 1;
        }
      }
      nextToken = page.nextToken;
    } while (nextToken !== undefined);
    return { checked, changed, errors };
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

function ownerOf(options: { owner?: string }): { owner?: string } {
  return options.owner === undefined ? {} : { owner: options.owner };
}

/**
 * The answer a refused submission got, as the idempotency reservation keeps it: for an error carrying AWS's
 * or DynamoDB's text (`BACKEND_TEXT_CODES`) only its code (the HTTP layer answers those with its own words).
 */
function rejectionOf(error: TxsError): IdempotencyRejection {
  const backendText = BACKEND_TEXT_CODES.has(error.code);
  const rejection: IdempotencyRejection = {
    code: error.code as ApiErrorCode,
    message: backendText ? submissionFailure(error) : error.message,
    issues: backendText ? [] : [...error.issues],
  };
  const retryable = (error as { retryable?: unknown }).retryable;
  if (typeof retryable === 'boolean') rejection.retryable = retryable;
  return rejection;
}

/**
 * The reason a failed submission records (shown to the app's owner as the status message): our own message,
 * or, for an error carrying AWS's or DynamoDB's text (`BACKEND_TEXT_CODES`), only its code; that text is in
 * the function's log with the request.
 */
function submissionFailure(error: unknown): string {
  if (error instanceof TxsError && BACKEND_TEXT_CODES.has(error.code)) {
    return `${error.code} (the backend refused it; the service's log has the details)`;
  }
  return error instanceof Error ? error.message : String(error);
}
