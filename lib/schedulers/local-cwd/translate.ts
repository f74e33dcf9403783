/**
 * Pure translation of an AppDef into the local scheduler's native request: one process spec per replica,
 * with macros applied per replica, TorchX's environment variables, log file paths and the working
 * directory. Port of TorchX's `LocalScheduler._to_popen_request` with the `CWDImageProvider`.
 *
 * @module
 */
import path from 'node:path';
import {
  type AppDef,
  applyMacros,
  type Cfg,
  InvalidRunConfigError,
  type JobWorkspace,
  makeUnique,
  RunOpts,
} from '../../specs/index.js';

/** Name of the environment variable holding rank 0's host; the `${rank0_env}` macro resolves to it. */
export const RANK0_HOST_ENV = 'TORCHX_RANK0_HOST';
/** Every replica runs on this machine, so rank 0's host is localhost (as in TorchX). */
export const RANK0_HOST = 'localhost';

/** The replica's stdout, byte for byte (TorchX's file name). */
export const STDOUT_LOG = 'stdout.log';
/** The replica's stderr, byte for byte (TorchX's file name). */
export const STDERR_LOG = 'stderr.log';
/** stdout and stderr as whole lines in arrival order (TorchX's file name). */
export const COMBINED_LOG = 'combined.log';
/** The torchelastic reply file a replica may write; read into `structuredErrorMsg` (TorchX's behaviour). */
export const ERROR_FILE = 'error.json';

/** The run options of `local_cwd`, resolved. */
export interface LocalCwdOpts extends Cfg {
  /** Absolute working directory of every replica; null means the scheduler's default (the server's cwd). */
  cwd: string | null;
  /**
   * The caller's environment, which replicas inherit instead of the server's (`txs run` sends its own).
   * Never recorded: only the names reach the request ({@link LocalCwdRequest.inheritedEnv}).
   */
  env: Record<string, string> | null;
  /** Put the working directory first on PATH instead of last. */
  prepend_cwd: boolean;
  /** Give each replica of a GPU role its own `CUDA_VISIBLE_DEVICES`. */
  auto_set_cuda_visible_devices: boolean;
}

/** One process to start: exactly what `schedule` spawns (no shell; `args` is the argv after the entrypoint). */
export interface LocalCwdReplicaSpec {
  role: string;
  /** Replica index within the role (the `${replica_id}` macro). */
  replicaId: number;
  /** The role's entrypoint as given; resolved through `env.PATH` relative to `cwd` when spawned. */
  entrypoint: string;
  args: string[];
  /**
   * Set on top of the inherited environment (the caller's `env` option, else the server's minimal
   * default): the role's env, TorchX's variables and PATH (with `cwd` appended or prepended).
   */
  env: Record<string, string>;
  /** Absolute working directory. */
  cwd: string;
  /** Absolute paths of the replica's log files. */
  stdout: string;
  stderr: string;
  combined: string;
}

/** The native request of `local_cwd` (TorchX `PopenRequest`): JSON-serialisable. */
export interface LocalCwdRequest {
  appId: string;
  /** `<dataDir>/<appId>`: holds `app.json` and `<role>/<replica>/` log directories. */
  logDir: string;
  /**
   * Names (never values) of the variables every replica inherits: the caller's `env` option, or the
   * server's minimal default ({@link MINIMAL_ENV_NAMES}) when the caller sent none.
   */
  inheritedEnv: string[];
  replicas: LocalCwdReplicaSpec[];
  /**
   * The workspace the replicas start in: the archive is unpacked into `dir` (every replica's `cwd`) as the
   * app starts, before any replica runs.
   */
  workspace?: LocalCwdWorkspace;
}

/** A run's workspace in local_cwd: the archive and the run's own copy of it. */
export interface LocalCwdWorkspace {
  sha256: string;
  fileCount: number;
  /** Absolute path of the archive (`<sha256>.tar.gz`) on this machine. */
  archive: string;
  /** The run's copy: `<dataDir>/.workspaces/<appId>`, made when the app starts. */
  dir: string;
}

/** The directory under the data directory holding the runs' workspace copies, one per app id. */
export const WORKSPACE_COPIES_DIR = '.workspaces';

/** Where the app `appId`'s copy of its workspace goes. */
export function workspaceCopyOf(dataDir: string, appId: string): string {
  return path.join(dataDir, WORKSPACE_COPIES_DIR, appId);
}

/**
 * The variables of the server's own environment a replica inherits when the caller sends no `env` (a plain
 * `curl`): enough to find programs and a home, nothing of the server's configuration (`TXS_*`, `npm_*`).
 */
export const MINIMAL_ENV_NAMES = ['PATH', 'HOME', 'LANG'] as const;

/** The server's minimal default environment: {@link MINIMAL_ENV_NAMES} taken from `serverEnv`. */
export function minimalEnv(serverEnv: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of MINIMAL_ENV_NAMES) {
    const value = serverEnv[name];
    if (value !== undefined) env[name] = value;
  }
  return env;
}

/** What translation needs besides the app and options. */
export interface TranslateContext {
  /** Root directory for app data (`<TXS_DATA_DIR>/local_cwd`). */
  dataDir: string;
  /** Working directory used when the `cwd` option is not set; relative `cwd` options resolve against it. */
  defaultCwd: string;
  /**
   * The environment replicas inherit when the `env` option is not set (PATH and PYTHONUNBUFFERED are read
   * from the inherited environment).
   */
  baseEnv: Readonly<Record<string, string | undefined>>;
  /** The unique suffix of the app id. */
  newId: () => string;
  /** Number of GPUs on this machine; called only when `auto_set_cuda_visible_devices` needs it. */
  gpuCount: () => number;
}

/**
 * Declares the run options of `local_cwd`.
 *
 * @example
 * ```ts
 * localCwdRunOpts().resolve({ prepend_cwd: true }); // { cwd: null, prepend_cwd: true, auto_set_cuda_visible_devices: false }
 * ```
 */
export function localCwdRunOpts(): RunOpts {
  return new RunOpts()
    .add('cwd', {
      type: 'str',
      help:
        "absolute path of an existing directory: the working directory of every replica (the role's image " +
        "is ignored). `txs run` sends its own working directory; default: the local server's",
    })
    .add('env', {
      type: 'dict[str,str]',
      help:
        "the caller's environment, which replicas inherit (the role's env wins); `txs run` sends its own. " +
        'Values are never recorded or echoed. Default: PATH, HOME and LANG of the local server',
    })
    .add('prepend_cwd', {
      type: 'bool',
      default: false,
      help: "if set, prepends CWD to replica's PATH env var making any binaries in CWD take precedence over those in PATH",
    })
    .add('auto_set_cuda_visible_devices', {
      type: 'bool',
      default: false,
      help:
        'sets the `CUDA_VISIBLE_DEVICES` for roles that request GPU resources. Each role replica will be ' +
        'assigned its own GPUs. Does nothing if the machine has fewer GPUs than requested in total.',
    });
}

/** Joins PATH entries, dropping empty ones and stray separators (TorchX `join_PATH`). */
export function joinPath(...entries: Array<string | undefined>): string {
  return entries
    .filter((e): e is string => e !== undefined && e !== '')
    .map((e) =>
      e
        .split(path.delimiter)
        .filter((p) => p !== '')
        .join(path.delimiter),
    )
    .filter((e) => e !== '')
    .join(path.delimiter);
}

/** The environment replicas inherit for `cfg`: the `env` option, else `fallback`. */
export function inheritedEnvOf(
  cfg: Pick<LocalCwdOpts, 'env'>,
  fallback: Readonly<Record<string, string | undefined>>,
): Readonly<Record<string, string | undefined>> {
  return cfg.env ?? fallback;
}

/** The absolute working directory for `cfg`. */
export function workingDirOf(cfg: Pick<LocalCwdOpts, 'cwd'>, defaultCwd: string): string {
  return path.resolve(defaultCwd, cfg.cwd ?? '.');
}

/** The PATH a replica sees: its role's PATH (or the inherited one) with `cwd` appended, or prepended. */
export function replicaPath(
  roleEnv: Readonly<Record<string, string>>,
  baseEnv: Readonly<Record<string, string | undefined>>,
  cwd: string,
  prependCwd: boolean,
): string {
  const inherited = roleEnv.PATH ?? baseEnv.PATH;
  return prependCwd ? joinPath(cwd, inherited) : joinPath(inherited, cwd);
}

/**
 * `CUDA_VISIBLE_DEVICES` per replica, TorchX's assignment: roles in order, each replica gets the next
 * `resource.gpu` devices. Empty when not asked, when no role asks for GPUs, or when the machine has fewer GPUs
 * than asked in total (TorchX warns there but assigns anyway; see the docs).
 */
export function cudaVisibleDevices(
  app: AppDef,
  cfg: LocalCwdOpts,
  gpuCount: () => number,
): Map<string, string> {
  const assigned = new Map<string, string>();
  if (!cfg.auto_set_cuda_visible_devices) return assigned;
  const perReplica = (gpu: number) => Math.max(0, gpu);
  const total = app.roles.reduce((sum, role) => sum + perReplica(role.resource.gpu) * role.numReplicas, 0);
  if (total <= 0 || total > gpuCount()) return assigned;
  let next = 0;
  for (const role of app.roles) {
    const gpus = perReplica(role.resource.gpu);
    for (let replicaId = 0; replicaId < role.numReplicas; replicaId++) {
      if (gpus === 0) continue;
      const devices = Array.from({ length: gpus }, (_, i) => next + replicaId * gpus + i);
      assigned.set(`${role.name}/${replicaId}`, devices.join(','));
    }
    next += gpus * role.numReplicas;
  }
  return assigned;
}

/**
 * Rejects TorchX's `log_dir` option: the local server fixes where logs live.
 *
 * @throws InvalidRunConfigError naming `cfg.log_dir` and what to do instead.
 */
export function rejectLogDir(cfg: Readonly<Cfg>): void {
  if (cfg.log_dir === undefined || cfg.log_dir === null) return;
  throw new InvalidRunConfigError(
    'Run option: log_dir, is not supported by torchx-serverless local_cwd: logs are kept under the local ' +
      "server's data directory (TXS_DATA_DIR) so they survive restarts; remove log_dir and read logs with " +
      '`txs log` or GET /v1/apps/local_cwd/{appId}/logs',
    'log_dir',
    cfg,
  );
}

/**
 * Translates `app` into the processes `local_cwd` will start. Pure but for `newId` and (only with
 * `auto_set_cuda_visible_devices` and a GPU role) `gpuCount`.
 *
 * Per replica: macros are applied with `img_root` = the working directory, `app_id`, `replica_id` = the
 * replica index and `rank0_env` = `TORCHX_RANK0_HOST`; the env gets `TORCHX_RANK0_HOST=localhost`,
 * `TORCHX_ROLE_NAME`, `TORCHX_ROLE_IDX`, `TORCHX_REPLICA_IDX`, `TORCHELASTIC_ERROR_FILE` (unless the role sets
 * it), `PYTHONUNBUFFERED=x` (unless set anywhere) and PATH with the working directory. With a `workspace`,
 * the working directory is the app's own copy of it ({@link workspaceCopyOf}), not `cfg.cwd`.
 *
 * @throws InvalidRunConfigError when `log_dir` is given (the server fixes where logs live).
 */
export function toLocalCwdRequest(
  app: AppDef,
  cfg: LocalCwdOpts,
  context: TranslateContext,
  workspace?: JobWorkspace,
): LocalCwdRequest {
  rejectLogDir(cfg);
  const appId = makeUnique(app.name, context.newId());
  const logDir = path.join(context.dataDir, appId);
  const copy = workspace && {
    sha256: workspace.sha256,
    fileCount: workspace.fileCount,
    archive: workspace.archive,
    dir: workspaceCopyOf(context.dataDir, appId),
  };
  const cwd = copy?.dir ?? workingDirOf(cfg, context.defaultCwd);
  const cuda = cudaVisibleDevices(app, cfg, context.gpuCount);
  const inherited = inheritedEnvOf(cfg, context.baseEnv);
  const replicas: LocalCwdReplicaSpec[] = [];
  app.roles.forEach((role, roleIdx) => {
    for (let replicaId = 0; replicaId < role.numReplicas; replicaId++) {
      const resolved = applyMacros(role, {
        imgRoot: cwd,
        appId,
        replicaId: String(replicaId),
        rank0Env: RANK0_HOST_ENV,
      });
      const replicaDir = path.join(logDir, role.name, String(replicaId));
      const env: Record<string, string> = { ...resolved.env };
      env[RANK0_HOST_ENV] = RANK0_HOST;
      env.TORCHX_ROLE_NAME = role.name;
      env.TORCHX_ROLE_IDX = String(roleIdx);
      env.TORCHX_REPLICA_IDX = String(replicaId);
      env.TORCHELASTIC_ERROR_FILE ??= path.join(replicaDir, ERROR_FILE);
      if (env.PYTHONUNBUFFERED === undefined && inherited.PYTHONUNBUFFERED === undefined) {
        env.PYTHONUNBUFFERED = 'x';
      }
      const devices = cuda.get(`${role.name}/${replicaId}`);
      if (devices !== undefined) env.CUDA_VISIBLE_DEVICES = devices;
      env.PATH = replicaPath(resolved.env, inherited, cwd, cfg.prepend_cwd);
      replicas.push({
        role: role.name,
        replicaId,
        entrypoint: role.entrypoint,
        args: resolved.args,
        env,
        cwd,
        stdout: path.join(replicaDir, STDOUT_LOG),
        stderr: path.join(replicaDir, STDERR_LOG),
        combined: path.join(replicaDir, COMBINED_LOG),
      });
    }
  });
  const inheritedEnv = Object.keys(inherited)
    .filter((name) => inherited[name] !== undefined)
    .sort();
  return { appId, logDir, inheritedEnv, replicas, ...(copy && { workspace: copy }) };
}
