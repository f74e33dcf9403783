/**
 * The `local_cwd` scheduler: TorchX's local scheduler with the current-working-directory image provider.
 * Each replica is a process on this machine, started without a shell in the working directory (the role's
 * image is ignored), with per-replica log files and state kept under the server's data directory.
 *
 * @module
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { hostname as osHostname } from 'node:os';
import path from 'node:path';
import {
  type AppDef,
  AppDryRunInfo,
  applyMacros,
  type Cfg,
  type DescribeAppResponse,
  DiskFullError,
  isDiskFull,
  isTerminal,
  type JobWorkspace,
  type ListAppResponse,
  MISSING,
  makeAppHandle,
  makeDescribeAppResponse,
  NONE,
  type RunOpts,
  randomId,
  UnknownAppError,
  ValidationError,
} from '../../specs/index.js';
import {
  InvalidLogTokenError,
  NotSupportedError,
  SchedulerError,
  UnknownReplicaError,
  UnknownRoleError,
} from '../errors.js';
import {
  DEFAULT_LOG_PAGE_SIZE,
  decodeLogToken,
  encodeLogToken,
  type LogPage,
  type LogPageRequest,
  type LogStream,
  MAX_LOG_PAGE_SIZE,
} from '../logs.js';
import {
  RUNNING_CAPABILITIES,
  Scheduler,
  type SchedulerCapabilities,
  type SchedulerContext,
} from '../scheduler.js';
import {
  APP_RECORD_VERSION,
  appDirOf,
  isSafePathSegment,
  type LocalAppRecord,
  listAppIds,
  readAppRecord,
  removeAppDir,
  type SupervisorRef,
} from './app-store.js';
import { reasonWithStderrTail } from './failure-detail.js';
import {
  LiveApp,
  type LiveAppDeps,
  type LocalStateChange,
  localStateReasonOf,
  roleStatusesOf,
  uiUrlOf,
} from './live-app.js';
import { readLogLines } from './log-files.js';
import { findExecutable, isDirectory, isExecutableFile, processLiveness, processRef } from './processes.js';
import {
  inheritedEnvOf,
  type LocalCwdOpts,
  type LocalCwdReplicaSpec,
  type LocalCwdRequest,
  localCwdRunOpts,
  minimalEnv,
  RANK0_HOST_ENV,
  rejectLogDir,
  replicaPath,
  toLocalCwdRequest,
  workingDirOf,
  workspaceCopyOf,
} from './translate.js';
import {
  listWorkspaceCopies,
  removeRemovalLeftovers,
  removeUnpackingLeftover,
  removeWorkspaceCopy,
  unpackWorkspaceCopy,
} from './workspace-copies.js';
import { readWorkspaceIndex } from './workspace-unpack.js';

/** The registered name of this scheduler. */
export const LOCAL_CWD = 'local_cwd';

/** Longest app name, in UTF-8 bytes: the app id adds `-` and up to 14 characters and must fit a file name. */
export const MAX_APP_NAME_BYTES = 240;

/**
 * Most bytes the command lines and environments of all replicas of one app may add up to: each replica gets
 * its own copy with macros applied, so replicas × args would otherwise bound only the memory of the server.
 */
export const MAX_PLANNED_COMMAND_BYTES = 64 * 1024 * 1024;

/** Bytes of a role's entrypoint, args and env (keys and values) as written, before macros. */
function commandBytes(role: AppDef['roles'][number]): number {
  const texts = [role.entrypoint, ...role.args, ...Object.entries(role.env).flat()];
  return texts.reduce((sum, text) => sum + Buffer.byteLength(text, 'utf8'), 0);
}

/** Default time between SIGTERM and SIGKILL when stopping a replica (TorchX's 10 s). */
export const DEFAULT_KILL_GRACE_PERIOD_MS = 10_000;

/** Default time a run's copy of its workspace is kept after the app ended: a day. */
export const DEFAULT_WORKSPACE_COPY_RETENTION_MS = 86_400_000;

/** Time between two sweeps of the runs' workspace copies once {@link LocalCwdScheduler.recover} ran. */
const WORKSPACE_SWEEP_INTERVAL_MS = 3_600_000;

/** Default time between two looks at a running replica's log files (and, when adopted, its process). */
export const DEFAULT_POLL_INTERVAL_MS = 100;

/** Options of {@link createLocalCwdScheduler}. */
export interface LocalCwdSchedulerOptions {
  /** Where app records and logs live (`<TXS_DATA_DIR>/local_cwd`); created on first use. */
  dataDir: string;
  /** Called with every state change of an app this scheduler runs, in order; awaited. */
  onStateChange?: (change: LocalStateChange) => void | Promise<void>;
  /** Called with failures that cannot reach a caller (log writes, a throwing `onStateChange`); default `console.error`. */
  onError?: (error: unknown) => void;
  /** Working directory when the `cwd` run option is not set; default `process.cwd()`. */
  cwd?: string;
  /** Time between SIGTERM and SIGKILL when stopping a replica's process group; default 10 000 ms. */
  killGracePeriodMs?: number;
  /** Makes the unique suffix of app ids (TorchX `make_unique`); default a random id. */
  idGenerator?: () => string;
  /**
   * The environment replicas inherit when the caller sends no `env` run option; default PATH, HOME and LANG
   * of `process.env` ({@link minimalEnv}), never the server's own configuration.
   */
  env?: Readonly<Record<string, string | undefined>>;
  /** Number of GPUs on this machine (for `auto_set_cuda_visible_devices`); default counts `nvidia-smi -L` lines. */
  gpuCount?: () => number;
  /** Host name reported for replicas; default `os.hostname()`. */
  hostname?: string;
  /** When true, `delete` also removes the app's directory (record and logs); default false (kept). */
  purgeOnDelete?: boolean;
  /** The umask replicas run with; default this process's umask when the scheduler is created. */
  replicaUmask?: number;
  /** Time between two looks at a running replica's log files and adopted processes; default 100 ms. */
  pollIntervalMs?: number;
  /**
   * How long a run's copy of its workspace is kept after its app ended; default a day
   * ({@link DEFAULT_WORKSPACE_COPY_RETENTION_MS}). Deleting the app removes it at once.
   */
  workspaceCopyRetentionMs?: number;
}

/** This process's umask, read without changing it. */
function currentUmask(): number {
  const umask = process.umask(0o022);
  process.umask(umask);
  return umask;
}

/** Scheduler instances alive in this process, by instance id (to tell a restart from a sibling instance). */
const openInstances = new Set<string>();

/** Counts GPUs like TorchX: the lines of `nvidia-smi -L`; 0 when it is missing or fails. */
export function countNvidiaGpus(): number {
  try {
    const out = execFileSync('nvidia-smi', ['-L'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    return out.split('\n').filter((line) => line.trim() !== '').length;
  } catch {
    return 0;
  }
}

interface LogToken {
  v: 1;
  app: string;
  role: string;
  replica: number;
  stream: LogStream;
  offset: number;
}

function isLogToken(value: unknown): value is LogToken {
  const t = value as Partial<LogToken> | null;
  return (
    t !== null &&
    typeof t === 'object' &&
    t.v === 1 &&
    typeof t.app === 'string' &&
    typeof t.role === 'string' &&
    typeof t.replica === 'number' &&
    typeof t.stream === 'string' &&
    typeof t.offset === 'number' &&
    Number.isSafeInteger(t.offset) &&
    t.offset >= 0
  );
}

/**
 * Runs apps as local processes (TorchX `local_cwd`). See `docs/schedulers/local-cwd.md`.
 *
 * @example
 * ```ts
 * const scheduler = createLocalCwdScheduler({ sessionName: 'torchx' }, { dataDir: '.txs-data/local_cwd' });
 * const app = makeAppDef({ name: 'hello', roles: [makeRole({ name: 'echo', image: '.', entrypoint: 'echo', args: ['hi'] })] });
 * const appId = await scheduler.submit(app);
 * const final = await scheduler.waitForExit(appId); // SUCCEEDED
 * for await (const line of scheduler.logIter(appId, { role: 'echo' })) console.log(line); // hi
 * ```
 */
export class LocalCwdScheduler extends Scheduler<LocalCwdOpts, LocalCwdRequest> {
  readonly dataDir: string;
  private readonly defaultCwd: string;
  private readonly killGracePeriodMs: number;
  private readonly newId: () => string;
  private readonly baseEnv: Readonly<Record<string, string | undefined>>;
  private readonly countGpus: () => number;
  private gpuCountCache?: number;
  private readonly hostname: string;
  private readonly purgeOnDelete: boolean;
  private readonly replicaUmask: number;
  private readonly pollIntervalMs: number;
  private readonly workspaceCopyRetentionMs: number;
  private sweepTimer?: NodeJS.Timeout;
  private readonly onStateChange: (change: LocalStateChange) => void | Promise<void>;
  private readonly onError: (error: unknown) => void;
  private readonly instanceId = randomBytes(8).toString('hex');
  private readonly live = new Map<string, LiveApp>();
  private readonly adopting = new Map<string, Promise<LocalAppRecord>>();
  /**
   * The caller's environment of each dry run, kept beside it (not in its cfg or request, which are recorded
   * and echoed) until `schedule` spawns the replicas. Nothing else needs it: recovery never respawns.
   */
  private readonly callerEnvs = new WeakMap<AppDryRunInfo<LocalCwdRequest>, Record<string, string>>();
  private closed = false;

  constructor(context: SchedulerContext, options: LocalCwdSchedulerOptions) {
    super(LOCAL_CWD, context);
    if (process.platform === 'win32') {
      throw new NotSupportedError(
        'local_cwd needs POSIX process groups and signals; it does not run on Windows',
      );
    }
    this.dataDir = options.dataDir;
    this.defaultCwd = options.cwd ?? process.cwd();
    this.killGracePeriodMs = options.killGracePeriodMs ?? DEFAULT_KILL_GRACE_PERIOD_MS;
    this.newId = options.idGenerator ?? randomId;
    this.baseEnv = options.env ?? minimalEnv(process.env);
    this.countGpus = options.gpuCount ?? countNvidiaGpus;
    this.hostname = options.hostname ?? osHostname();
    this.purgeOnDelete = options.purgeOnDelete ?? false;
    this.replicaUmask = options.replicaUmask ?? currentUmask();
    this.pollIntervalMs = options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
    this.workspaceCopyRetentionMs = options.workspaceCopyRetentionMs ?? DEFAULT_WORKSPACE_COPY_RETENTION_MS;
    this.onStateChange = options.onStateChange ?? (() => undefined);
    this.onError = options.onError ?? ((error) => console.error('local_cwd:', error));
    openInstances.add(this.instanceId);
  }

  runOpts(): RunOpts {
    return localCwdRunOpts();
  }

  /**
   * Takes a workspace kept on this machine (the local server's archives): the app's replicas start in its
   * own copy, unpacked as the app starts (see {@link schedule}).
   */
  override checkWorkspace(workspace: JobWorkspace): void {
    if (!path.isAbsolute(workspace.archive)) {
      throw ValidationError.forField(
        'workspace',
        `local_cwd runs the workspace kept by the local server, not ${workspace.archive}`,
      );
    }
  }

  /**
   * {@link validate}, then the dry run. With a workspace the replicas start in the app's copy of it, which
   * does not exist yet: entrypoints are looked up in the archive's index (written when it was stored), so a
   * missing one is still refused before anything is recorded. An archive without its index is one not
   * stored yet, which only a dry run names (it packs without uploading; a run's archive is stored, indexed):
   * entrypoints in the copy are then taken as there, and the run checks them.
   *
   * @throws ValidationError naming the field (`cfg.cwd` when given with a workspace).
   */
  override validatedDryrun(
    app: AppDef,
    cfg: Readonly<Cfg>,
    workspace?: JobWorkspace,
  ): AppDryRunInfo<LocalCwdRequest> {
    if (workspace === undefined) return super.validatedDryrun(app, cfg);
    this.checkWorkspace(workspace);
    const index = readWorkspaceIndex(workspace.archive);
    const root = workspaceCopyOf(this.dataDir, `${app.name}-<id>`);
    const names = index && new Set([...index.executables, ...index.links]);
    this.validateApp(app, cfg, {
      root,
      isExecutable: (file) => {
        const rel = path.relative(root, file);
        if (rel.startsWith('..') || path.isAbsolute(rel)) return isExecutableFile(file);
        return names === undefined || names.has(rel.split(path.sep).join('/'));
      },
    });
    return this.submitDryrun(app, cfg, workspace);
  }

  capabilities(): SchedulerCapabilities {
    return { ...RUNNING_CAPABILITIES };
  }

  protected translate(
    app: AppDef,
    cfg: LocalCwdOpts,
    workspace?: JobWorkspace,
  ): AppDryRunInfo<LocalCwdRequest> {
    const request = toLocalCwdRequest(
      app,
      cfg,
      {
        dataDir: this.dataDir,
        defaultCwd: this.defaultCwd,
        baseEnv: this.baseEnv,
        newId: this.newId,
        gpuCount: () => {
          this.gpuCountCache ??= this.countGpus();
          return this.gpuCountCache;
        },
      },
      workspace,
    );
    // The caller's environment may hold secrets: the recorded cfg keeps none of it (request.inheritedEnv
    // has the names).
    const info = new AppDryRunInfo(LOCAL_CWD, app, { ...cfg, env: null }, request);
    if (cfg.env !== null) this.callerEnvs.set(info, cfg.env);
    return info;
  }

  appIdOf(dryrun: AppDryRunInfo<LocalCwdRequest>): string {
    return dryrun.request.appId;
  }

  /**
   * Checks that the app can run here. Unlike the cloud schedulers (and like TorchX's local scheduler) a role
   * needs no resource. Names must be usable as directory names, the working directory must exist and every
   * entrypoint must be found.
   *
   * @throws ValidationError naming the field.
   */
  override validate(app: AppDef, cfg: Readonly<Cfg> = {}): void {
    this.validateApp(app, cfg);
  }

  /**
   * {@link validate}; with `workspace`, the replicas start in `workspace.root` (not `cfg.cwd`, which must
   * then be unset), where `workspace.isExecutable` tells which files there are.
   */
  private validateApp(
    app: AppDef,
    cfg: Readonly<Cfg>,
    workspace?: { root: string; isExecutable: (file: string) => boolean },
  ): void {
    // The app id (`<name>-<id of up to 14 characters>`) names a directory.
    if (!isSafePathSegment(app.name, MAX_APP_NAME_BYTES)) {
      throw ValidationError.forField(
        'app.name',
        `'${app.name}' cannot name a directory; use 1-${MAX_APP_NAME_BYTES} bytes without '/', '\\' or NUL, other than '.' and '..'`,
      );
    }
    const resolved = this.runOpts().resolve(cfg) as LocalCwdOpts;
    rejectLogDir(resolved);
    if (app.roles.length === 0)
      throw ValidationError.forField('app.roles', 'the app has no roles; add at least one');
    if (resolved.cwd !== null && !path.isAbsolute(resolved.cwd)) {
      throw ValidationError.forField(
        'cfg.cwd',
        `${resolved.cwd} is not an absolute path; give the absolute path of an existing directory`,
      );
    }
    if (workspace !== undefined && resolved.cwd !== null) {
      throw ValidationError.forField(
        'cfg.cwd',
        'the replicas start in the workspace; give either cfg.cwd or a workspace, not both',
      );
    }
    const cwd = workspace?.root ?? workingDirOf(resolved, this.defaultCwd);
    if (workspace === undefined && !isDirectory(cwd)) {
      throw ValidationError.forField(
        'cfg.cwd',
        `${cwd} is not a directory; give an existing working directory`,
      );
    }
    const seen = new Set<string>();
    let replicas = 0;
    let planned = 0;
    app.roles.forEach((role, i) => {
      if (!isSafePathSegment(role.name)) {
        throw ValidationError.forField(
          `app.roles.${i}.name`,
          `'${role.name}' cannot name a log directory; use 1-255 bytes without '/', '\\' or NUL, other than '.' and '..'`,
        );
      }
      if (seen.has(role.name)) {
        throw ValidationError.forField(
          `app.roles.${i}.name`,
          `role '${role.name}' appears twice; give each role its own name`,
        );
      }
      seen.add(role.name);
      if (!Number.isInteger(role.numReplicas) || role.numReplicas < 0) {
        throw ValidationError.forField(`app.roles.${i}.numReplicas`, 'must be a whole number ≥ 0');
      }
      replicas += role.numReplicas;
      planned += role.numReplicas * commandBytes(role);
      if (planned > MAX_PLANNED_COMMAND_BYTES) {
        throw ValidationError.forField(
          `app.roles.${i}.numReplicas`,
          `${role.numReplicas} replicas of '${role.name}' each get their own copy of its args and env, ` +
            `${MAX_PLANNED_COMMAND_BYTES / 1024 / 1024} MiB at most for the app; use fewer replicas or shorter args and env`,
        );
      }
      if (role.entrypoint === MISSING || role.entrypoint === '') {
        throw ValidationError.forField(`app.roles.${i}.entrypoint`, 'is missing; give the command to run');
      }
      const env = applyMacros(role, {
        imgRoot: cwd,
        appId: app.name,
        replicaId: '0',
        rank0Env: RANK0_HOST_ENV,
      }).env;
      const searchPath = replicaPath(env, inheritedEnvOf(resolved, this.baseEnv), cwd, resolved.prepend_cwd);
      if (findExecutable(role.entrypoint, searchPath, cwd, workspace?.isExecutable) === undefined) {
        throw ValidationError.forField(
          `app.roles.${i}.entrypoint`,
          this.entrypointNotFound(role.entrypoint, searchPath, cwd),
        );
      }
    });
    if (replicas === 0)
      throw ValidationError.forField('app.roles', 'no role has replicas; set numReplicas ≥ 1');
  }

  private entrypointNotFound(entrypoint: string, searchPath: string, cwd: string): string {
    return entrypoint.includes('/')
      ? `'${entrypoint}' is not an executable file (resolved against ${cwd}); fix the path or make it executable`
      : `'${entrypoint}' was not found on PATH (${searchPath}); give an absolute path, a path relative to the ` +
          'working directory, or install the command';
  }

  /** Resolves each replica's executable, or throws before anything is written or started. */
  private resolveExecutables(dryrun: AppDryRunInfo<LocalCwdRequest>): string[] {
    return dryrun.request.replicas.map((spec: LocalCwdReplicaSpec) => {
      const roleIndex = dryrun.app.roles.findIndex((r) => r.name === spec.role);
      if (!isSafePathSegment(spec.role)) {
        throw ValidationError.forField(
          `app.roles.${roleIndex}.name`,
          `'${spec.role}' cannot name a log directory`,
        );
      }
      if (!isDirectory(spec.cwd)) {
        throw ValidationError.forField(
          'cfg.cwd',
          `${spec.cwd} is not a directory; give an existing working directory`,
        );
      }
      const executable = findExecutable(spec.entrypoint, spec.env.PATH, spec.cwd);
      if (executable === undefined) {
        throw ValidationError.forField(
          `app.roles.${roleIndex}.entrypoint`,
          this.entrypointNotFound(spec.entrypoint, spec.env.PATH ?? '', spec.cwd),
        );
      }
      return executable;
    });
  }

  /**
   * Starts every replica of the dry run and resolves once they all started (RUNNING is recorded and reported)
   * or one failed to start (the app then ends FAILED).
   *
   * With a workspace, resolves once the app is recorded (SUBMITTED): its copy of the workspace is unpacked
   * after that, and the replicas start once it is whole — like a cloud job pulling its image. An unpack that
   * fails (the archive is gone, the disk is full) ends the app FAILED with the reason, no replica started.
   *
   * @throws ValidationError when an entrypoint or the working directory is missing (nothing is started).
   * @throws SchedulerError when the scheduler is closed or the app id already exists.
   */
  async schedule(dryrun: AppDryRunInfo<LocalCwdRequest>): Promise<string> {
    if (this.closed)
      throw new SchedulerError('the local_cwd scheduler is closed; start the local server again');
    const { request } = dryrun;
    if (!isSafePathSegment(request.appId)) {
      throw ValidationError.forField('app.name', `'${dryrun.app.name}' cannot name a directory`);
    }
    const { workspace } = request;
    const executables =
      workspace === undefined
        ? this.resolveExecutables(dryrun)
        : async () => {
            try {
              await unpackWorkspaceCopy(workspace);
            } catch (error) {
              throw new Error(`its workspace could not be unpacked: ${(error as Error).message}`);
            }
            return this.resolveExecutables(dryrun);
          };
    try {
      await mkdir(this.dataDir, { recursive: true });
      await mkdir(appDirOf(this.dataDir, request.appId));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST') {
        throw new SchedulerError(
          `app ${request.appId} already exists in ${this.dataDir}; dry run again for a new id`,
        );
      }
      if (isDiskFull(e)) throw new DiskFullError(this.dataDir, { cause: e });
      throw e;
    }
    const now = this.now();
    const supervisor: SupervisorRef = { ...processRef(process.pid), instance: this.instanceId };
    const record: LocalAppRecord = {
      version: APP_RECORD_VERSION,
      appId: request.appId,
      session: this.sessionName,
      app: dryrun.app,
      cfg: dryrun.cfg,
      request,
      state: 'SUBMITTED',
      structuredErrorMsg: NONE,
      supervisor,
      replicas: request.replicas.map((spec) => ({
        role: spec.role,
        replicaId: spec.replicaId,
        state: 'PENDING',
      })),
      createdAt: now,
      updatedAt: now,
    };
    try {
      await LiveApp.start(
        record,
        executables,
        { ...this.liveAppDeps(), baseEnv: this.callerEnvs.get(dryrun) ?? this.baseEnv },
        (liveApp) => this.track(liveApp),
      );
    } catch (e) {
      // Nothing started (the first record write failed): nothing to serve from memory either.
      this.live.delete(request.appId);
      if (isDiskFull(e)) throw new DiskFullError(this.dataDir, { cause: e });
      throw e;
    }
    return request.appId;
  }

  /**
   * Serves the app from memory while it runs, and after it ended until its final record is on disk (a write
   * refused by a full disk is retried at each later read of the app).
   */
  private track(liveApp: LiveApp): void {
    const { appId } = liveApp.record;
    this.live.set(appId, liveApp);
    void liveApp.done.then(() => {
      if (liveApp.saved) this.live.delete(appId);
    });
  }

  private liveAppDeps(): LiveAppDeps {
    return {
      dataDir: this.dataDir,
      now: this.now,
      hostname: this.hostname,
      killGracePeriodMs: this.killGracePeriodMs,
      baseEnv: this.baseEnv,
      replicaUmask: this.replicaUmask,
      pollIntervalMs: this.pollIntervalMs,
      onStateChange: async (change) => {
        const record = this.live.get(change.appId)?.record;
        if (change.state === 'FAILED' && record !== undefined) {
          const reason = await reasonWithStderrTail(record);
          if (reason !== undefined) change.reason = reason;
        }
        await this.onStateChange(change);
      },
      onError: this.onError,
    };
  }

  /** True when a live scheduler (this one, a sibling in this process, or another process) supervises the app. */
  private isSupervised(supervisor: SupervisorRef): boolean {
    if (supervisor.pid === process.pid) return openInstances.has(supervisor.instance);
    return processLiveness(supervisor) !== 'dead';
  }

  /**
   * The app's record: from memory while this scheduler runs it, else from disk. An app left non-terminal by a
   * local server that is gone is adopted first (see {@link adopt}).
   */
  private async load(appId: string): Promise<LocalAppRecord | undefined> {
    const live = this.live.get(appId);
    if (live) {
      if (isTerminal(live.state) && !live.saved && (await live.save())) this.live.delete(appId);
      return live.record;
    }
    const record = await readAppRecord(this.dataDir, appId);
    if (record === undefined || isTerminal(record.state) || this.isSupervised(record.supervisor))
      return record;
    let adoption = this.adopting.get(appId);
    if (!adoption) {
      adoption = this.adopt(record).finally(() => this.adopting.delete(appId));
      this.adopting.set(appId, adoption);
    }
    return adoption;
  }

  /**
   * Takes over an app whose local server died while it ran: replicas that ended meanwhile get the exit code
   * their wrapper recorded (so one that exited 0 is SUCCEEDED); replicas still running (verified by pid and
   * start time) are tracked, logged and cancellable as if this scheduler had started them. Resolves with the
   * record once what already ended is recorded.
   */
  private async adopt(record: LocalAppRecord): Promise<LocalAppRecord> {
    if (this.closed) return record;
    record.supervisor = { ...processRef(process.pid), instance: this.instanceId };
    const liveApp = await LiveApp.adopt(record, this.liveAppDeps());
    if (!isTerminal(liveApp.state) || !liveApp.saved) this.track(liveApp);
    return liveApp.record;
  }

  /**
   * Adopts every app left running by a local server that is gone (see {@link adopt}); returns their ids. The
   * local server calls it before it accepts requests; `describe` and `list` do it lazily anyway.
   */
  async recover(): Promise<string[]> {
    const recovered: string[] = [];
    for (const appId of await listAppIds(this.dataDir)) {
      if (this.live.has(appId)) continue;
      try {
        const before = await readAppRecord(this.dataDir, appId);
        if (before === undefined || isTerminal(before.state) || this.isSupervised(before.supervisor))
          continue;
        await this.load(appId);
        recovered.push(appId);
      } catch (e) {
        this.onError(e);
      }
    }
    this.startSweeping();
    return recovered;
  }

  /** Sweeps the workspace copies now, then every hour until {@link close}. */
  private startSweeping(): void {
    if (this.sweepTimer !== undefined || this.closed) return;
    const sweep = () => void this.sweepWorkspaceCopies().catch(this.onError);
    this.sweepTimer = setInterval(sweep, WORKSPACE_SWEEP_INTERVAL_MS);
    this.sweepTimer.unref();
    sweep();
  }

  async describe(appId: string): Promise<DescribeAppResponse | undefined> {
    const record = await this.load(appId);
    if (record === undefined) return undefined;
    const terminal = isTerminal(record.state);
    const reason = terminal ? await reasonWithStderrTail(record) : undefined;
    const desc = makeDescribeAppResponse({
      appId,
      state: record.state,
      numRestarts: 0,
      attempt: 0,
      msg: reason ?? NONE,
      structuredErrorMsg: record.structuredErrorMsg,
      uiUrl: uiUrlOf(record),
      metadata: { ...record.app.metadata },
      rolesStatuses: roleStatusesOf(record, this.hostname),
      roles: structuredClone(record.app.roles),
      updatedAt: record.updatedAt,
    });
    const stateReason = localStateReasonOf(record, reason);
    if (stateReason !== undefined) desc.stateReason = stateReason;
    return desc;
  }

  /** Every app under the data directory, newest first. Unreadable records are reported and skipped. */
  async list(): Promise<ListAppResponse[]> {
    const records: LocalAppRecord[] = [];
    for (const appId of await listAppIds(this.dataDir)) {
      try {
        const record = await this.load(appId);
        if (record) records.push(record);
      } catch (e) {
        this.onError(e);
      }
    }
    return records
      .sort((a, b) => b.createdAt - a.createdAt)
      .map((r) => ({ appId: r.appId, state: r.state, appHandle: '<NOT_SET>', name: r.app.name }));
  }

  /**
   * Resolves with the app's description once it is terminal (immediately when it already is).
   *
   * @throws UnknownAppError when the app does not exist.
   */
  async waitForExit(appId: string): Promise<DescribeAppResponse> {
    await this.load(appId);
    await this.live.get(appId)?.done;
    const desc = await this.describe(appId);
    if (desc === undefined) throw new UnknownAppError(makeAppHandle(LOCAL_CWD, this.sessionName, appId));
    return desc;
  }

  /**
   * SIGTERM to every live replica's process group, SIGKILL after the grace period; resolves once the app is
   * CANCELLED (or FAILED, if a replica had failed first) and recorded.
   *
   * @throws SchedulerError when another local server supervises the app.
   */
  protected async cancelExisting(appId: string, reason: string): Promise<void> {
    // Loading first adopts an app a dead server left running, so it can be cancelled here.
    const record = await this.load(appId);
    const live = this.live.get(appId);
    if (live) {
      await live.cancel(reason);
      return;
    }
    if (record === undefined || isTerminal(record.state)) return;
    throw new SchedulerError(
      `app ${appId} is supervised by another local server (pid ${record.supervisor.pid}); cancel it there`,
    );
  }

  /**
   * Cancels the app if it runs and removes its copy of its workspace; removes its directory only with
   * `purgeOnDelete` (logs are kept by default).
   */
  protected override async deleteExisting(appId: string): Promise<void> {
    await this.cancel(appId, 'deleted via torchx-serverless');
    await removeWorkspaceCopy(this.dataDir, appId);
    if (this.purgeOnDelete) await removeAppDir(this.dataDir, appId);
  }

  /**
   * Removes the workspace copies of apps that ended more than the retention period ago (or whose record is
   * gone), and what a crash left of copies being unpacked or removed. The copy of an app that has not ended
   * is never touched.
   */
  async sweepWorkspaceCopies(now: number = this.now()): Promise<void> {
    const { copies, unpacking } = await listWorkspaceCopies(this.dataDir);
    const ended = async (appId: string): Promise<number | undefined> => {
      if (this.live.has(appId)) return undefined;
      const record = await readAppRecord(this.dataDir, appId).catch(() => undefined);
      if (record === undefined) return 0;
      return isTerminal(record.state) ? (record.finishedAt ?? record.updatedAt) : undefined;
    };
    for (const appId of copies) {
      const endedAt = await ended(appId);
      if (endedAt !== undefined && endedAt < now - this.workspaceCopyRetentionMs) {
        await removeWorkspaceCopy(this.dataDir, appId);
      }
    }
    for (const appId of unpacking) {
      if ((await ended(appId)) !== undefined) await removeUnpackingLeftover(this.dataDir, appId);
    }
    await removeRemovalLeftovers(this.dataDir);
  }

  protected override async fetchLogPage(appId: string, request: LogPageRequest): Promise<LogPage> {
    const record = await this.load(appId);
    if (record === undefined) throw new UnknownAppError(makeAppHandle(LOCAL_CWD, this.sessionName, appId));
    const roleNames = record.app.roles.map((r) => r.name);
    if (!roleNames.includes(request.role)) throw new UnknownRoleError(request.role, roleNames);
    const replicaId = request.replica ?? 0;
    const replicas = record.request.replicas.filter((r) => r.role === request.role);
    const spec = replicas.find((r) => r.replicaId === replicaId);
    const replicaRecord = record.replicas.find((r) => r.role === request.role && r.replicaId === replicaId);
    if (spec === undefined || replicaRecord === undefined) {
      throw new UnknownReplicaError(request.role, replicaId, replicas.length);
    }
    const stream: LogStream = request.streams ?? 'combined';
    let offset = 0;
    if (request.nextToken !== undefined) {
      const token = decodeLogToken(request.nextToken);
      if (
        !isLogToken(token) ||
        token.app !== appId ||
        token.role !== request.role ||
        token.replica !== replicaId ||
        token.stream !== stream
      ) {
        throw new InvalidLogTokenError();
      }
      offset = token.offset;
    }
    const limit = Math.min(
      MAX_LOG_PAGE_SIZE,
      Math.max(1, Math.floor(request.limit ?? DEFAULT_LOG_PAGE_SIZE)),
    );
    const complete = isTerminal(record.state);
    const since = request.since?.getTime();
    const until = request.until?.getTime();
    const read = await readLogLines({
      file: spec[stream],
      offset,
      limit,
      complete,
      ...(since !== undefined && !Number.isNaN(since) ? { since } : {}),
      ...(until !== undefined && !Number.isNaN(until) ? { until } : {}),
      fallbackTime: replicaRecord.startedAt ?? record.createdAt,
    });
    const page: LogPage = { lines: read.lines, caughtUp: read.caughtUp };
    if (!read.untilReached && !(complete && read.caughtUp)) {
      const token: LogToken = {
        v: 1,
        app: appId,
        role: request.role,
        replica: replicaId,
        stream,
        offset: read.nextOffset,
      };
      page.nextToken = encodeLogToken(token);
    }
    return page;
  }

  /**
   * Stops every app this scheduler runs or adopted (they end FAILED: the local server stopped) and waits until
   * each is recorded. Safe to call twice; `schedule` fails afterwards.
   */
  override async close(): Promise<void> {
    this.closed = true;
    if (this.sweepTimer !== undefined) clearInterval(this.sweepTimer);
    await Promise.allSettled([...this.adopting.values()]);
    await Promise.all([...this.live.values()].map((app) => app.shutdown()));
    openInstances.delete(this.instanceId);
  }
}

/**
 * Builds the `local_cwd` scheduler. The local server registers it as
 * `{ local_cwd: (ctx) => createLocalCwdScheduler(ctx, { dataDir, onStateChange }) }`.
 *
 * @example
 * ```ts
 * const scheduler = createLocalCwdScheduler({ sessionName: 'torchx' }, {
 *   dataDir: path.join(process.env.TXS_DATA_DIR ?? '.txs-data', 'local_cwd'),
 *   onStateChange: (change) => bus.publish(change),
 * });
 * ```
 */
export function createLocalCwdScheduler(
  context: SchedulerContext,
  options: LocalCwdSchedulerOptions,
): LocalCwdScheduler {
  return new LocalCwdScheduler(context, options);
}
