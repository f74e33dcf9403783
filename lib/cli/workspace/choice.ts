/**
 * Which directory `txs run` ships as the workspace, the way TorchX's `torchx run` chooses it: `--workspace`
 * (`""` for none), else `workspace` under `[cli:run]` of `.txsconfig`, else the current directory for a
 * scheduler that runs an image and takes a workspace. Kept apart from the packing modules, which load
 * `node:crypto` and `tar-stream`: a run without a workspace never imports them.
 *
 * @module
 */
import { resolve } from 'node:path';
import { displayText } from '../../specs/names.js';
import { WORKSPACE_SCHEDULERS, WORKSPACE_SHA256_PATTERN } from '../../specs/workspaces.js';
import { UsageError } from '../errors.js';

/**
 * Schedulers that take a workspace only when one is asked for: their jobs run in the caller's directory
 * (TorchX's `local_cwd` has no workspace at all), so the current directory is no default there.
 */
export const OPT_IN_WORKSPACE_SCHEDULERS: readonly string[] = ['local_cwd'];

/**
 * Schedulers that take a workspace only into the directory a run option names: TorchX's slurm
 * (`DirWorkspaceMixin`) copies the workspace into `job_dir` and does nothing without one, so neither the
 * default nor `.txsconfig` gives a slurm run without `job_dir` a workspace.
 */
export const WORKSPACE_NEEDS_RUN_OPTION: Readonly<Record<string, string>> = { slurm: 'job_dir' };

/** Where the workspace came from: `--workspace`, `.txsconfig`, or the current directory by default. */
export type WorkspaceSource = 'flag' | 'config' | 'default';

/** The directory to ship and why it is that one. */
export interface WorkspaceChoice {
  /** Absolute path of the directory. */
  readonly dir: string;
  readonly source: WorkspaceSource;
}

/** An archive the server already holds, named with `--workspace sha256:<hex>` (a relaunch with the same code). */
export interface StoredWorkspace {
  readonly sha256: string;
}

/** The prefix of `--workspace` that names a stored archive instead of a directory. */
export const STORED_PREFIX = 'sha256:';

/** What the choice depends on. */
export interface WorkspaceChoiceInput {
  readonly scheduler: string;
  /** `--workspace` as given (`''` means none); undefined when absent. */
  readonly flag: string | undefined;
  /** `workspace` under `[cli:run]` of `.txsconfig` (`''` means none); undefined when unset. */
  readonly configured: string | undefined;
  /** The caller's working directory: the default, and what relative paths are relative to. */
  readonly cwd: string;
  /** The caller's home directory, which is never shipped by default (see {@link chooseWorkspace}). */
  readonly home?: string;
  /** The run options of the run, as far as `txs` knows them (`-cfg` and `.txsconfig`). */
  readonly cfg?: Readonly<Record<string, unknown>>;
  /** The schedulers that take a workspace (default: {@link WORKSPACE_SCHEDULERS}). */
  readonly takesWorkspace?: (scheduler: string) => boolean;
}

/** True when `scheduler` takes a workspace at all. */
function defaultTakesWorkspace(scheduler: string): boolean {
  return WORKSPACE_SCHEDULERS.includes(scheduler);
}

/**
 * Refuses a workspace for `scheduler` when it takes none (`txs run --workspace DIR`, `txs workspace -s`),
 * before anything is packed.
 *
 * @param asked - what asked for the workspace, as the caller wrote it (e.g. `--workspace src`).
 * @param hint - the way on.
 * @throws UsageError naming the scheduler and the schedulers that take a workspace.
 */
export function checkTakesWorkspace(scheduler: string, asked: string, hint: string): void {
  if (!defaultTakesWorkspace(scheduler)) throw noWorkspaceFor(scheduler, asked, hint);
}

/** The usage error for a workspace asked of a scheduler that takes none. */
function noWorkspaceFor(scheduler: string, asked: string, hint: string): UsageError {
  const able = WORKSPACE_SCHEDULERS.join(', ');
  return new UsageError(
    `the ${displayText(scheduler)} scheduler cannot take a workspace (${asked}); only ${able} can`,
    hint,
  );
}

/**
 * The workspace of a run, or undefined for none. As in TorchX, the default (the current directory) and a
 * `.txsconfig` value apply only where the scheduler takes a workspace (for slurm: only with `job_dir`) and
 * are left out elsewhere; an explicit `--workspace DIR` for a scheduler that cannot take one is an error.
 *
 * The default never ships the home directory or `/` (run from there by habit, they hold credentials such
 * as `~/.aws` and `~/.ssh`, and are rarely code): that is a usage error saying how to choose. TorchX would
 * pack them; `--workspace ~` still does, when meant.
 *
 * `--workspace sha256:<hex>` names an archive the server holds (uploaded by an earlier run or `txs workspace`)
 * instead of a directory: nothing is packed or uploaded, and the run gets that same code.
 *
 * @throws UsageError naming the scheduler when `--workspace DIR` is given for a scheduler that takes none,
 *   when `sha256:` is not followed by a SHA-256, or when the default would be the home directory or `/`.
 * @example
 * ```ts
 * chooseWorkspace({ scheduler: 'aws_batch', flag: undefined, configured: undefined, cwd: '/src' });
 * // { dir: '/src', source: 'default' } (once aws_batch takes a workspace)
 * ```
 */
export function chooseWorkspace(input: WorkspaceChoiceInput): WorkspaceChoice | StoredWorkspace | undefined {
  const takes = (input.takesWorkspace ?? defaultTakesWorkspace)(input.scheduler);
  if (input.flag !== undefined) {
    if (input.flag === '') return undefined;
    if (!takes) {
      throw noWorkspaceFor(
        input.scheduler,
        `--workspace ${displayText(input.flag)}`,
        'run without one: --workspace ""',
      );
    }
    if (input.flag.startsWith(STORED_PREFIX)) return storedWorkspace(input.flag);
    return { dir: resolve(input.cwd, input.flag), source: 'flag' };
  }
  const option = WORKSPACE_NEEDS_RUN_OPTION[input.scheduler];
  const value = option === undefined ? undefined : input.cfg?.[option];
  const defaultsApply =
    takes && (option === undefined || (value !== undefined && value !== null && value !== ''));
  if (input.configured !== undefined) {
    if (input.configured === '' || !defaultsApply) return undefined;
    return { dir: resolve(input.cwd, input.configured), source: 'config' };
  }
  if (!defaultsApply || OPT_IN_WORKSPACE_SCHEDULERS.includes(input.scheduler)) return undefined;
  const cwd = resolve(input.cwd);
  if (cwd === resolve('/') || (input.home !== undefined && cwd === resolve(input.home))) {
    throw new UsageError(
      `the ${input.scheduler} scheduler ships the current directory as its workspace, and the current directory is ${cwd === resolve('/') ? 'the root directory' : 'your home directory'} (${displayText(cwd)}), which is never shipped unasked`,
      'run from your project directory, name one with --workspace DIR, or run without one: --workspace ""',
    );
  }
  return { dir: input.cwd, source: 'default' };
}

/**
 * The archive named by `--workspace sha256:<hex>`.
 *
 * @throws UsageError when what follows `sha256:` is not 64 lowercase hex digits.
 */
function storedWorkspace(flag: string): StoredWorkspace {
  const sha256 = flag.slice(STORED_PREFIX.length);
  if (!WORKSPACE_SHA256_PATTERN.test(sha256)) {
    throw new UsageError(
      `--workspace ${displayText(flag)} names no archive: after sha256: give the 64 lowercase hex digits of one`,
      'see the hash with `txs describe HANDLE` or `txs workspace DIR`; a directory of that name: --workspace ./' +
        displayText(flag),
    );
  }
  return { sha256 };
}

/**
 * The stderr line said before packing: which directory is shipped, and, when `txs` chose it rather than
 * `--workspace`, where from and how to run without it.
 */
export function describeChoice(choice: WorkspaceChoice, scheduler = 'this scheduler'): string {
  const why: Record<WorkspaceSource, string> = {
    flag: '',
    config: ' (workspace in [cli:run] of .txsconfig; --workspace "" runs without it)',
    default: ` (the current directory, the default workspace for ${scheduler}; --workspace "" runs without it)`,
  };
  return `workspace: packing ${displayText(choice.dir)}${why[choice.source]}`;
}
