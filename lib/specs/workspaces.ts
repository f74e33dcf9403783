/**
 * Workspace facts the CLI needs at start-up, kept out of the zod schemas (the CLI loads no schema module
 * before it needs one): the schedulers that take a workspace and the form of an archive's content address.
 *
 * @module
 */

/** The pattern of a workspace archive's content address: its SHA-256, 64 lowercase hex digits. */
export const WORKSPACE_SHA256_PATTERN = /^[0-9a-f]{64}$/;

/**
 * The schedulers that take a workspace (docs/workspaces.md): each checks that it can reach the archive
 * (`Scheduler.checkWorkspace`): a local server's file (local_cwd, local_docker, slurm) or an `s3://` object in
 * a stack's workspace bucket (aws_batch, aws_sagemaker, kubernetes, kubernetes_mcad).
 */
export const WORKSPACE_SCHEDULERS: readonly string[] = [
  'local_cwd',
  'aws_batch',
  'aws_sagemaker',
  'local_docker',
  'slurm',
  'kubernetes',
  'kubernetes_mcad',
];
