/**
 * Workspace facts the CLI needs at start-up, kept out of the zod schemas (the CLI loads no schema module
 * before it needs one): the schedulers that take a workspace and the form of an archive's content address.
 *
 * @module
 */

/** The pattern of a workspace archive's content address: its SHA-256, 64 lowercase hex digits. */
export const WORKSPACE_SHA256_PATTERN = /^[0-9a-f]{64}$/;

/**
 * Where a job of each scheduler that takes a workspace fetches its archive from (docs/workspaces.md):
 * `server`, a file on the local server's machine (local_cwd, local_docker, slurm); `s3`, an object in a
 * workspace bucket (aws_batch, aws_sagemaker, kubernetes, kubernetes_mcad), which the job reads with its own
 * role. The local server copies its stored archive to its `TXS_WORKSPACE_BUCKET` for an `s3` scheduler. Each
 * scheduler still checks that it can reach the archive it is handed (`Scheduler.checkWorkspace`).
 */
export const WORKSPACE_ARCHIVE_SOURCES: Readonly<Record<string, 'server' | 's3'>> = {
  local_cwd: 'server',
  aws_batch: 's3',
  aws_sagemaker: 's3',
  local_docker: 'server',
  slurm: 'server',
  kubernetes: 's3',
  kubernetes_mcad: 's3',
};

/** The schedulers that take a workspace: those of {@link WORKSPACE_ARCHIVE_SOURCES}. */
export const WORKSPACE_SCHEDULERS: readonly string[] = Object.keys(WORKSPACE_ARCHIVE_SOURCES);
