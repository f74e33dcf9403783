/**
 * Supervision of one running local app: starts its replicas (or adopts those a previous server started),
 * tails their log files, decides replica and app states from exit codes, terminates process groups (SIGTERM,
 * then SIGKILL after a grace period), records every change in `app.json` and reports state changes in order,
 * the terminal one once.
 *
 * @module
 */
import type { ChildProcess } from 'node:child_process';
import { mkdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import {
  type AppState,
  type AppStateTransition,
  isTerminal,
  makeStateReason,
  NONE,
  type ReplicaStatus,
  type RoleStatus,
  type StateReason,
} from '../../specs/index.js';
import { type LocalAppRecord, type LocalReplicaRecord, writeAppRecord } from './app-store.js';
import { ReplicaLogTailer } from './log-tail.js';
import {
  exitCodeOfSignal,
  groupAlive,
  processLiveness,
  processRef,
  signalProcessGroup,
} from './processes.js';
import {
  type GatedReplica,
  type RecordedExit,
  readRecordedExit,
  spawnGatedReplica,
} from './replica-process.js';
import type { LocalCwdReplicaSpec } from './translate.js';

/** A state change of a local app, shaped like the transitions EventBridge events become. */
export type LocalStateChange = AppStateTransition & { appId: string };

/**
 * What a local app waits for or why it ended, and only that: `starting N replicas` while SUBMITTED (since
 * it was created), preceded by `unpacking its workspace (F files), then` until its workspace copy is made;
 * the end reason of a finished app (since it finished). Undefined while it runs, and for a finished app
 * without a reason.
 *
 * @param reason the end reason to report (the record's, or with the stderr tail)
 */
export function localStateReasonOf(
  record: Pick<LocalAppRecord, 'state' | 'replicas' | 'createdAt' | 'updatedAt' | 'finishedAt'> & {
    request?: Pick<LocalAppRecord['request'], 'workspace'>;
  },
  reason: string | undefined,
): StateReason | undefined {
  if (record.state === 'SUBMITTED') {
    const n = record.replicas.length;
    const starting = `starting ${n} replica${n === 1 ? '' : 's'}`;
    const workspace = record.request?.workspace;
    const unpacking =
      workspace !== undefined && record.replicas.every((replica) => replica.process === undefined)
        ? `unpacking its workspace (${workspace.fileCount.toLocaleString('en-US')} file${workspace.fileCount === 1 ? '' : 's'}), then `
        : '';
    return makeStateReason('local_cwd', `${unpacking}${starting}`, record.createdAt);
  }
  if (!isTerminal(record.state)) return undefined;
  return makeStateReason('local_cwd', reason, record.finishedAt ?? record.updatedAt);
}

/** What a live app needs from its scheduler. */
export interface LiveAppDeps {
  dataDir: string;
  now: () => number;
  hostname: string;
  killGracePeriodMs: number;
  /** The environment replicas inherit; each replica's `env` is laid over it. */
  baseEnv: Readonly<Record<string, string | undefined>>;
  /** The umask replicas run with. */
  replicaUmask: number;
  /** How often logs are tailed and adopted replicas checked (ms). */
  pollIntervalMs: number;
  /** Receives state changes, in order; awaited before the next one. */
  onStateChange: (change: LocalStateChange) => void | Promise<void>;
  /** Receives failures that cannot be thrown to a caller (log writes, callbacks). */
  onError: (error: unknown) => void;
}

/** Why an app is ending before all its replicas exited on their own. */
interface EndCause {
  kind: 'cancel' | 'failure' | 'shutdown';
  reason: string;
}

/** The reason recorded when the local server stops while an app runs. */
export const SERVER_STOPPED_REASON =
  'the local server stopped while the app was running; its replicas were terminated';

/** The reason of a replica that ended while no server watched it and left no exit code. */
export const EXIT_CODE_UNKNOWN_REASON =
  'ended while the local server was down, without recording an exit code (killed by a signal)';

/** The reason of a replica a crashed server recorded as started but never as running. */
export const NEVER_STARTED_REASON = 'the local server stopped before this replica started';

class LiveReplica {
  child?: ChildProcess;
  /** The replica's process-group leader (the wrapper), once started or adopted. */
  pid?: number;
  /** Started by an earlier server: its exit is noticed by polling, not by a child event. */
  adopted = false;
  tailer?: ReplicaLogTailer;
  spawnError?: Error;
  /** The main process ended. */
  exited = false;
  /** The replica is being finalised (its group is gone or was killed). */
  closed = false;
  /** The replica's final state is recorded. */
  finished = false;
  terminationRequested = false;
  killSent = false;
  killTimer?: NodeJS.Timeout;
  groupTimer?: NodeJS.Timeout;
  errorFileTime?: number;

  constructor(
    readonly spec: LocalCwdReplicaSpec,
    readonly record: LocalReplicaRecord,
  ) {}

  get label(): string {
    return `${this.spec.role}[${this.spec.replicaId}]`;
  }

  clearTimers(): void {
    if (this.killTimer !== undefined) clearTimeout(this.killTimer);
    if (this.groupTimer !== undefined) clearInterval(this.groupTimer);
    this.killTimer = undefined;
    this.groupTimer = undefined;
  }
}

/** Per-replica statuses grouped by role, in the app's role order. */
export function roleStatusesOf(record: LocalAppRecord, hostname: string): RoleStatus[] {
  return record.app.roles.map((role) => ({
    role: role.name,
    replicas: record.replicas
      .filter((r) => r.role === role.name)
      .sort((a, b) => a.replicaId - b.replicaId)
      .map((r) => {
        const status: ReplicaStatus = {
          id: r.replicaId,
          state: r.state,
          role: r.role,
          hostname,
          structuredErrorMsg: r.structuredErrorMsg ?? NONE,
        };
        if (r.exitCode !== undefined) status.exitCode = r.exitCode;
        if (r.reason !== undefined) status.reason = r.reason;
        return status;
      }),
  }));
}

/** The `file://` URL of an app's directory (TorchX reports `file://<log_dir>` as the UI URL). */
export function uiUrlOf(record: LocalAppRecord): string {
  return `file://${record.request.logDir}`;
}

/** How a replica's process ended, e.g. `exited with code 3` or `killed by signal SIGKILL (exit code 137)`. */
function exitReason(record: LocalReplicaRecord): string {
  return record.signal !== undefined
    ? `killed by signal ${record.signal} (exit code ${record.exitCode})`
    : `exited with code ${record.exitCode}`;
}

/** Settles a replica that ended while no server watched it from what its wrapper recorded. */
function settleFromExitFile(replica: LiveReplica, recorded: RecordedExit): void {
  if (recorded.kind === 'never-ran') replica.spawnError = new Error(NEVER_STARTED_REASON);
  else if (recorded.kind === 'exited') replica.record.exitCode = recorded.code;
}

/** Reads a torchelastic error file: its JSON (re-serialised) and mtime, or undefined when absent or invalid. */
async function readErrorFile(
  file: string | undefined,
): Promise<{ json: string; mtimeMs: number } | undefined> {
  if (file === undefined) return undefined;
  try {
    const info = await stat(file);
    if (!info.isFile() || info.size > 1024 * 1024) return undefined;
    const parsed: unknown = JSON.parse(await readFile(file, 'utf8'));
    const message = (
      parsed as { message?: { message?: unknown; extraInfo?: { timestamp?: unknown } } } | null
    )?.message;
    // AppStatus.format() reads message.message and message.extraInfo.timestamp; ignore other shapes.
    if (typeof message?.message !== 'string' || message.extraInfo?.timestamp === undefined) return undefined;
    return { json: JSON.stringify(parsed), mtimeMs: info.mtimeMs };
  } catch {
    return undefined;
  }
}

/**
 * One app whose replicas this process supervises. Create it with {@link LiveApp.start} or
 * {@link LiveApp.adopt}; `done` resolves with the final record once the app is terminal, its logs are
 * tailed to the end and the terminal state is recorded.
 */
export class LiveApp {
  readonly done: Promise<LocalAppRecord>;
  private resolveDone: (record: LocalAppRecord) => void = () => undefined;
  private readonly replicas: LiveReplica[];
  private cause?: EndCause;
  private ending = false;
  private pollTimer?: NodeJS.Timeout;
  private polling = false;
  /** The last write of `app.json` failed. */
  private unsaved = false;
  /** Serialises record writes and state-change callbacks. */
  private queue: Promise<void> = Promise.resolve();

  private constructor(
    readonly record: LocalAppRecord,
    private readonly deps: LiveAppDeps,
  ) {
    this.done = new Promise((resolve) => {
      this.resolveDone = resolve;
    });
    this.replicas = record.request.replicas.map(
      (spec, i) => new LiveReplica(spec, record.replicas[i] as LocalReplicaRecord),
    );
  }

  /**
   * Records the app (SUBMITTED), creates its log directories, starts every replica (through the wrapper, in
   * its own process group, output to files) held at its gate, records their pids, and only then releases
   * them: no replica runs before its pid is on disk, so a server killed at any moment leaves none that a
   * restarted server cannot find. Resolves once all have started (RUNNING recorded and reported) or failed to.
   *
   * With `prepare` instead of the executables, resolves once the app is recorded (SUBMITTED); `prepare`
   * (unpacking the app's workspace) then runs, and the replicas start with the executables it resolves to.
   * When it throws, no replica starts and the app ends FAILED with its message; when the app is cancelled
   * or the server stops meanwhile, no replica starts either.
   *
   * @param executables absolute path of each replica's entrypoint, in request order, or what finds them.
   * @param register called with the app before any replica starts (so it can be cancelled while starting).
   */
  static async start(
    record: LocalAppRecord,
    executables: readonly string[] | (() => Promise<readonly string[]>),
    deps: LiveAppDeps,
    register: (app: LiveApp) => void = () => undefined,
  ): Promise<LiveApp> {
    const app = new LiveApp(record, deps);
    register(app);
    await app.persist();
    for (const replica of app.replicas) {
      await mkdir(path.dirname(replica.spec.stdout), { recursive: true });
      replica.tailer = await ReplicaLogTailer.open(replica.spec, deps.now);
    }
    if (typeof executables === 'function') void app.prepareThenLaunch(executables).catch(deps.onError);
    else await app.launch(executables);
    return app;
  }

  /** Runs `prepare`, then starts the replicas unless it failed or the app is ending. */
  private async prepareThenLaunch(prepare: () => Promise<readonly string[]>): Promise<void> {
    let executables: readonly string[];
    try {
      executables = await prepare();
    } catch (error) {
      for (const replica of this.replicas) {
        replica.spawnError = error instanceof Error ? error : new Error(String(error));
        replica.exited = true;
      }
      this.afterStart();
      await Promise.all(this.replicas.map((replica) => this.finishReplica(replica)));
      return;
    }
    if (this.ending) {
      // Cancelled (or the server stopped) while preparing: nothing to start.
      for (const replica of this.replicas) {
        replica.terminationRequested = true;
        replica.exited = true;
      }
      await Promise.all(this.replicas.map((replica) => this.finishReplica(replica)));
      return;
    }
    await this.launch(executables);
  }

  /** Starts every replica held at its gate, records their pids, then releases them (see {@link start}). */
  private async launch(executables: readonly string[]): Promise<void> {
    const gates = await Promise.all(
      this.replicas.map((replica, i) => this.startReplica(replica, executables[i] as string)),
    );
    // The pids are on disk (written after every earlier write, before any release) before any replica runs.
    await this.persist().catch((error: unknown) => {
      this.endWith({ kind: 'failure', reason: `the app's record could not be written: ${String(error)}` });
    });
    this.replicas.forEach((replica, i) => {
      const gate = gates[i];
      if (gate === undefined) return;
      if (this.ending) {
        // Stopped while starting: the wrapper exits without running the entrypoint.
        replica.terminationRequested = true;
        gate.abandon();
      } else {
        gate.release();
      }
    });
    this.afterStart();
    this.startPolling();
    await this.queue;
  }

  /**
   * Takes over an app whose server is gone: replicas still running (same pid and start time) are tracked from
   * now on; those that ended meanwhile are settled from the exit code their wrapper recorded; their logs are
   * tailed from where the previous server stopped. Resolves once the replicas that already ended are
   * recorded (and the terminal state, when none runs any more).
   *
   * @param record the app's record, already naming this scheduler as its supervisor.
   */
  static async adopt(record: LocalAppRecord, deps: LiveAppDeps): Promise<LiveApp> {
    const app = new LiveApp(record, deps);
    await app.persist();
    const ended: LiveReplica[] = [];
    for (const replica of app.replicas) {
      if (isTerminal(replica.record.state)) {
        replica.exited = true;
        replica.closed = true;
        replica.finished = true;
        continue;
      }
      replica.tailer = await ReplicaLogTailer.open(replica.spec, deps.now);
      const ref = replica.record.process;
      if (ref === undefined) {
        replica.spawnError = new Error(NEVER_STARTED_REASON);
        replica.exited = true;
        continue;
      }
      replica.pid = ref.pid;
      replica.adopted = true;
      if (processLiveness(ref) === 'dead') {
        replica.exited = true;
        settleFromExitFile(replica, await readRecordedExit(replica.spec));
        if (replica.spawnError === undefined) ended.push(replica);
      }
    }
    const neverStarted = app.replicas.filter((r) => r.spawnError !== undefined);
    if (neverStarted.length === 0 && app.record.state === 'SUBMITTED') app.afterStart();
    for (const replica of neverStarted) {
      app.endWith({ kind: 'failure', reason: `${replica.label} could not start: ${NEVER_STARTED_REASON}` });
    }
    for (const replica of ended) app.afterExit(replica);
    // Replicas that ended while no server watched are settled without signalling their process group: its id
    // may belong to an unrelated process by now.
    await Promise.all([...neverStarted, ...ended].map((r) => app.finishReplica(r)));
    app.startPolling();
    await app.queue;
    return app;
  }

  /** Current state. */
  get state(): AppState {
    return this.record.state;
  }

  /** False while the last change could not be written to `app.json` (a full disk): memory is ahead of it. */
  get saved(): boolean {
    return !this.unsaved;
  }

  /** Writes the current record again (after a failed write); resolves with whether `app.json` is now current. */
  async save(): Promise<boolean> {
    try {
      await this.persist();
      this.unsaved = false;
    } catch {
      // Still no space: memory stays ahead of the file, and the next call tries again.
    }
    return !this.unsaved;
  }

  /**
   * Cancels the app: SIGTERM to every live replica's process group, SIGKILL after the grace period. Resolves
   * with the final record. A no-op when the app already ended; a replica that already failed keeps the app
   * FAILED.
   */
  cancel(reason: string): Promise<LocalAppRecord> {
    if (!isTerminal(this.record.state)) {
      this.record.cancelRequestedAt ??= this.deps.now();
      this.endWith({ kind: 'cancel', reason });
    }
    return this.done;
  }

  /** Stops the app because the local server is closing; it ends FAILED. Resolves with the final record. */
  shutdown(): Promise<LocalAppRecord> {
    if (!isTerminal(this.record.state)) this.endWith({ kind: 'shutdown', reason: SERVER_STOPPED_REASON });
    return this.done;
  }

  /**
   * Starts the replica's wrapper held at its gate; resolves with the gate once its pid is known (recorded in
   * memory, RUNNING), or with undefined when it could not start.
   */
  private startReplica(replica: LiveReplica, executable: string): Promise<GatedReplica | undefined> {
    const { spec } = replica;
    let gated: GatedReplica;
    try {
      gated = spawnGatedReplica(
        spec,
        executable,
        { ...this.deps.baseEnv, ...spec.env },
        this.deps.replicaUmask,
      );
    } catch (e) {
      replica.spawnError = e as Error;
      replica.exited = true;
      void this.finishReplica(replica);
      return Promise.resolve(undefined);
    }
    const { child } = gated;
    replica.child = child;
    child.once('exit', (code, signal) => this.onExit(replica, code, signal));
    return new Promise((resolve) => {
      child.once('spawn', () => {
        const pid = child.pid as number;
        replica.pid = pid;
        replica.record.process = processRef(pid);
        replica.record.startedAt = this.deps.now();
        replica.record.state = 'RUNNING';
        resolve(gated);
      });
      child.on('error', (error) => {
        if (replica.record.process !== undefined) {
          this.deps.onError(error);
          return;
        }
        replica.spawnError = error;
        replica.exited = true;
        resolve(undefined);
        void this.finishReplica(replica);
      });
    });
  }

  /** After every replica started or failed to: RUNNING when all started, else end as FAILED. */
  private afterStart(): void {
    const failed = this.replicas.find((r) => r.spawnError !== undefined);
    if (failed) {
      this.endWith({
        kind: 'failure',
        reason: `${failed.label} could not start: ${failed.spawnError?.message}`,
      });
      return;
    }
    if (this.ending || isTerminal(this.record.state)) return;
    const now = this.deps.now();
    this.record.state = 'RUNNING';
    this.record.startedAt ??= now;
    this.record.updatedAt = now;
    this.report('RUNNING', now);
  }

  private startPolling(): void {
    if (this.replicas.every((r) => r.finished)) return;
    this.pollTimer = setInterval(() => void this.poll(), this.deps.pollIntervalMs);
  }

  /** Tails every replica's logs and notices adopted replicas that ended. */
  private async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      for (const replica of this.replicas) {
        if (replica.closed) continue;
        const ref = replica.record.process;
        if (replica.adopted && !replica.exited && ref !== undefined && processLiveness(ref) === 'dead') {
          const recorded = await readRecordedExit(replica.spec);
          if (recorded.kind === 'never-ran') {
            // Its gate closed with the previous server, an instant after this one found it alive.
            replica.exited = true;
            settleFromExitFile(replica, recorded);
            this.afterExit(replica);
            await this.finishReplica(replica);
            continue;
          }
          // No exit code after a termination we asked for: the wrapper died of the signal we sent.
          const code = recorded.kind === 'exited' ? recorded.code : undefined;
          const sent = replica.killSent ? 'SIGKILL' : 'SIGTERM';
          this.onExit(
            replica,
            code ?? null,
            code === undefined && replica.terminationRequested ? sent : null,
          );
        }
        await replica.tailer?.poll().catch((e: unknown) => this.deps.onError(e));
      }
    } finally {
      this.polling = false;
    }
  }

  private onExit(replica: LiveReplica, code: number | null, signal: NodeJS.Signals | null): void {
    if (replica.exited) return;
    replica.exited = true;
    replica.record.exitCode = code ?? (signal ? exitCodeOfSignal(signal) : undefined);
    if (signal) replica.record.signal = signal;
    this.afterExit(replica);
    // Like a container: nothing of the replica outlives its main process. Whatever is left in its process
    // group (background jobs) gets SIGTERM, then SIGKILL; the replica is final once its group is gone.
    // A replica we are terminating already got SIGTERM and has its SIGKILL deadline.
    const pid = replica.pid;
    if (pid === undefined || replica.killSent) {
      void this.finishReplica(replica);
      return;
    }
    if (!replica.terminationRequested) {
      this.signal(pid, 'SIGTERM');
      this.killAfter(replica, pid, this.deps.killGracePeriodMs);
    }
    let checking = false;
    const check = async () => {
      if (checking || replica.closed) return;
      checking = true;
      try {
        if (!(await groupAlive(pid))) await this.finishReplica(replica);
      } finally {
        checking = false;
      }
    };
    void check();
    replica.groupTimer = setInterval(() => void check(), 20);
  }

  /** SIGKILLs the replica's group after `ms`; a replica whose main process had exited is then final. */
  private killAfter(replica: LiveReplica, pid: number, ms: number): void {
    if (replica.killTimer !== undefined) clearTimeout(replica.killTimer);
    replica.killTimer = setTimeout(() => {
      replica.killSent = true;
      this.signal(pid, 'SIGKILL');
      if (!replica.exited) return;
      if (replica.terminationRequested) {
        // Asked to stop, the replica did not within the grace period: it was killed, whatever its wrapper did.
        replica.record.exitCode = exitCodeOfSignal('SIGKILL');
        replica.record.signal = 'SIGKILL';
      }
      void this.finishReplica(replica);
    }, ms);
  }

  /** Fail fast, like a multi-node job in the cloud: a replica that failed on its own stops the others. */
  private afterExit(replica: LiveReplica): void {
    if (replica.spawnError !== undefined && !this.cause) {
      this.endWith({
        kind: 'failure',
        reason: `${replica.label} could not start: ${replica.spawnError.message}`,
      });
      return;
    }
    if (!replica.terminationRequested && replica.record.exitCode !== 0 && !this.cause) {
      const how =
        replica.record.exitCode === undefined ? EXIT_CODE_UNKNOWN_REASON : exitReason(replica.record);
      this.endWith({ kind: 'failure', reason: `${replica.label} ${how}` });
    }
  }

  private async finishReplica(replica: LiveReplica): Promise<void> {
    if (replica.closed) return;
    replica.closed = true;
    replica.clearTimers();
    try {
      await replica.tailer?.finish();
    } catch (e) {
      this.deps.onError(e);
    }
    const errorFile = await readErrorFile(replica.spec.env.TORCHELASTIC_ERROR_FILE);
    const { record } = replica;
    const finishedAt = this.deps.now();
    record.finishedAt = finishedAt;
    if (errorFile) {
      record.structuredErrorMsg = errorFile.json;
      replica.errorFileTime = errorFile.mtimeMs;
    }
    if (replica.spawnError) {
      record.state = 'FAILED';
      record.reason =
        replica.spawnError.message === NEVER_STARTED_REASON
          ? NEVER_STARTED_REASON
          : `could not start '${replica.spec.entrypoint}': ${replica.spawnError.message}`;
    } else if (replica.terminationRequested && this.cause) {
      record.state = this.cause.kind === 'shutdown' ? 'FAILED' : 'CANCELLED';
      record.reason =
        this.cause.kind === 'failure'
          ? `terminated because the app failed: ${this.cause.reason}`
          : `terminated: ${this.cause.reason}`;
    } else if (record.exitCode === 0) {
      record.state = 'SUCCEEDED';
    } else {
      record.state = 'FAILED';
      record.reason = record.exitCode === undefined ? EXIT_CODE_UNKNOWN_REASON : exitReason(record);
      if (!this.cause) this.endWith({ kind: 'failure', reason: `${replica.label} ${record.reason}` });
    }
    replica.finished = true;
    this.record.updatedAt = finishedAt;
    if (this.replicas.every((r) => r.finished)) {
      this.finishApp();
    } else if (this.record.state === 'RUNNING') {
      // Fresher replica details at the same state (the store applies them by event time).
      this.report('RUNNING', finishedAt);
    }
  }

  /** Sets the cause (the first one wins) and terminates every replica still running. */
  private endWith(cause: EndCause): void {
    if (this.replicas.every((r) => r.exited || r.closed)) {
      // Nothing left to stop: the app ends on its replicas' own exit codes.
      if (cause.kind === 'failure') this.cause ??= cause;
      return;
    }
    this.cause ??= cause;
    this.ending = true;
    for (const replica of this.replicas) this.terminate(replica);
  }

  private terminate(replica: LiveReplica): void {
    const pid = replica.pid;
    if (replica.exited || replica.closed || pid === undefined || replica.terminationRequested) return;
    replica.terminationRequested = true;
    this.signal(pid, 'SIGTERM');
    this.killAfter(replica, pid, this.deps.killGracePeriodMs);
  }

  private signal(pid: number, signal: NodeJS.Signals): void {
    try {
      signalProcessGroup(pid, signal);
    } catch (e) {
      this.deps.onError(e);
    }
  }

  private finishApp(): void {
    if (isTerminal(this.record.state)) return;
    if (this.pollTimer !== undefined) clearInterval(this.pollTimer);
    const now = this.deps.now();
    const record = this.record;
    let state: AppState;
    let reason: string;
    if (this.cause?.kind === 'cancel') {
      state = 'CANCELLED';
      reason = this.cause.reason;
    } else if (this.cause) {
      state = 'FAILED';
      reason = this.cause.reason;
      const terminated = this.replicas.filter((r) => r.terminationRequested).length;
      if (this.cause.kind === 'failure' && terminated > 0) {
        reason += `; ${terminated} other replica(s) were terminated`;
      }
    } else {
      const failed = this.replicas.find((r) => r.record.state !== 'SUCCEEDED');
      state = failed ? 'FAILED' : 'SUCCEEDED';
      reason = failed
        ? `${failed.label} ${failed.record.reason ?? 'failed'}`
        : 'all replicas exited with code 0';
    }
    const earliestError = this.replicas
      .filter((r) => r.errorFileTime !== undefined)
      .sort((a, b) => (a.errorFileTime as number) - (b.errorFileTime as number))[0];
    record.structuredErrorMsg = earliestError?.record.structuredErrorMsg ?? NONE;
    record.state = state;
    record.reason = reason;
    record.finishedAt = now;
    record.updatedAt = now;
    this.report(state, now);
    void this.queue.then(() => this.resolveDone(record));
  }

  /** Records the current record and reports `state`, after every earlier write and report. */
  private report(state: AppState, eventTime: number): void {
    const change: LocalStateChange = {
      appId: this.record.appId,
      state,
      eventTime,
      attempt: 0,
      source: 'local',
      numRestarts: 0,
      roles: roleStatusesOf(this.record, this.deps.hostname),
      uiUrl: uiUrlOf(this.record),
    };
    if (isTerminal(state) && this.record.reason !== undefined) change.reason = this.record.reason;
    const stateReason = localStateReasonOf(this.record, change.reason);
    if (stateReason !== undefined) change.stateReason = stateReason;
    const snapshot = structuredClone(this.record);
    this.queue = this.queue.then(async () => {
      try {
        await writeAppRecord(this.deps.dataDir, snapshot);
        this.unsaved = false;
      } catch (e) {
        this.unsaved = true;
        this.deps.onError(e);
      }
      try {
        await this.deps.onStateChange(change);
      } catch (e) {
        this.deps.onError(e);
      }
    });
  }

  /** Records the current record after every earlier write; rejects when it cannot (the queue goes on). */
  private persist(): Promise<void> {
    const snapshot = structuredClone(this.record);
    const written = this.queue.then(() => writeAppRecord(this.deps.dataDir, snapshot));
    this.queue = written.catch(() => undefined);
    return written;
  }
}
