/**
 * A slurm job in a workspace, as TorchX's `DirWorkspaceMixin` makes one: before the job is submitted, the
 * workspace is laid out in `job_dir`, a new directory on the cluster's shared filesystem, and the job runs
 * there (its working directory; srun's steps inherit it). TorchX's client copied the files from the user's
 * machine; here the server unpacks its stored archive, so it must see the cluster's filesystem (the local
 * server next to its cluster, with `TXS_SLURM_LOG_ROOT`) and the job's Slurm user must be able to write the
 * directory the server creates (the same OS user, as with TorchX).
 *
 * @module
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { lstat, mkdir, rename, rm } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join } from 'node:path';
import { promisify } from 'node:util';
import { DiskFullError, isDiskFull, type JobWorkspace, ValidationError } from '../../specs/index.js';

const run = promisify(execFile);

/**
 * The workspace of a slurm request: the archive (`archive`, an absolute path on the server's machine) that
 * is unpacked into `job_dir` at submission.
 */
export type SlurmWorkspace = Pick<JobWorkspace, 'sha256' | 'archive'>;

/** How to fix a workspace run without a usable `job_dir`. */
const JOB_DIR_HINT =
  'a workspace is unpacked into job_dir, a new directory on the cluster the job runs in: set one that does ' +
  'not exist yet, e.g. -cfg job_dir=/shared/jobs/train-1, or run without a workspace (txs run --workspace "")';

/**
 * The request-side form of a workspace.
 *
 * @throws ValidationError naming `workspace` when the archive is not a file of this server (an `s3://`
 *   archive of a deployed stack: its functions cannot write to the cluster's filesystem).
 */
export function slurmWorkspaceOf(workspace: Readonly<JobWorkspace>): SlurmWorkspace {
  if (!isAbsolute(workspace.archive)) {
    throw ValidationError.forField(
      'workspace',
      `slurm unpacks a workspace into job_dir from the server's own disk, and this server keeps the archive at ` +
        `'${workspace.archive}': run with a workspace against a local server that sees the cluster's ` +
        'filesystem, or without one (txs run --workspace "")',
    );
  }
  return { sha256: workspace.sha256, archive: workspace.archive };
}

/**
 * Refuses a workspace run without `job_dir` (TorchX's `DirWorkspaceMixin` silently did nothing then).
 *
 * @throws ValidationError naming `cfg.job_dir`.
 */
export function requireJobDir(jobDir: string | null): string {
  if (jobDir === null)
    throw ValidationError.forField('cfg.job_dir', `is required with a workspace: ${JOB_DIR_HINT}`);
  return jobDir;
}

/**
 * Unpacks `archive` into the new directory `dir` (the job's `job_dir` as this server sees it): into a
 * hidden sibling first, renamed to `dir` once whole, so a crash never leaves a half workspace under the
 * job's name (at most a `.<name>.txs-…` directory beside it). The directory gets the process's umask, like
 * TorchX's `os.mkdir`; the files keep the archive's modes and belong to this process's user.
 *
 * @throws ValidationError naming `cfg.job_dir` when `dir` exists or its parent does not; ValidationError
 *   naming `workspace` when tar cannot unpack the archive; DiskFullError when the filesystem is full.
 */
export async function unpackIntoJobDir(archive: string, dir: string): Promise<void> {
  if (
    await lstat(dir).then(
      () => true,
      () => false,
    )
  ) {
    throw ValidationError.forField('cfg.job_dir', `'${dir}' exists; ${JOB_DIR_HINT}`);
  }
  const temp = join(dirname(dir), `.${basename(dir)}.txs-${randomBytes(6).toString('hex')}`);
  try {
    await mkdir(temp);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw ValidationError.forField(
        'cfg.job_dir',
        `the parent directory of '${dir}' does not exist; ${JOB_DIR_HINT}`,
      );
    }
    throw error;
  }
  try {
    await run('tar', ['-x', '-z', '--no-same-owner', '-f', archive, '-C', temp]).catch((error: unknown) => {
      if (isDiskFull(error)) throw new DiskFullError(dir, { cause: error });
      const stderr = String((error as { stderr?: unknown }).stderr ?? error).trim();
      throw ValidationError.forField(
        'workspace',
        `archive ${archive} cannot be unpacked into ${dir}: ${stderr}`,
      );
    });
    await rename(temp, dir).catch((error: unknown) => {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOTEMPTY' || code === 'EEXIST') {
        throw ValidationError.forField('cfg.job_dir', `'${dir}' was created meanwhile; ${JOB_DIR_HINT}`);
      }
      throw error;
    });
  } catch (error) {
    await rm(temp, { recursive: true, force: true });
    throw error;
  }
}
