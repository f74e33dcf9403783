/**
 * Workspace facts the CLI needs at start-up, kept out of the zod schemas (the CLI loads no schema module
 * before it needs one): the schedulers that take a workspace and the form of an archive's content address.
 *
 * @module
 */

/** The pattern of a workspace archive's content address: its SHA-256, 64 lowercase hex digits. */
export const WORKSPACE_SHA256_PATTERN = /^[0-9a-f]{64}$/;

/**
 * The schedulers that take a workspace today (docs/workspaces.md): local_cwd on the local server; aws_batch and
 * aws_sagemaker with an archive in a stack's S3 workspace bucket.
 */
export const WORKSPACE_SCHEDULERS: readonly string[] = ['local_cwd', 'aws_batch', 'aws_sagemaker'];
