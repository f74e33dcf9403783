/**
 * Workspaces for the schedulers whose jobs fetch the archive from S3 themselves (`aws_batch`,
 * `aws_sagemaker`, `kubernetes`, `kubernetes_mcad`): the check that the archive is an `s3://` object the job can be pointed at.
 *
 * @module
 */
import { type JobWorkspace, ValidationError } from '../specs/index.js';
import { isS3Uri } from './aws-names.js';

/** A workspace archive in S3: its URI, bucket and key (`<prefix>/<sha256>.tar.gz`). */
export interface S3Archive {
  uri: string;
  bucket: string;
  key: string;
}

/**
 * The S3 object of a workspace's archive, for a scheduler whose job reads the archive from S3 with its own
 * role (the job runs on AWS: it cannot reach a path on the server's machine).
 *
 * @example
 * ```ts
 * s3ArchiveOf({ sha256, size, fileCount, archive: `s3://ws-bucket/alice/${sha256}.tar.gz` }, 'aws_batch');
 * // { uri: 's3://ws-bucket/alice/….tar.gz', bucket: 'ws-bucket', key: 'alice/….tar.gz' }
 * ```
 *
 * @throws ValidationError naming `workspace` when the archive is not an `s3://bucket/key` URI (e.g. a local
 *   server's archive, kept on its own disk).
 */
export function s3ArchiveOf(workspace: Readonly<JobWorkspace>, backend: string): S3Archive {
  const uri = workspace.archive;
  const slash = uri.indexOf('/', 's3://'.length);
  if (!uri.startsWith('s3://') || !isS3Uri(uri) || slash < 0 || slash === uri.length - 1) {
    throw ValidationError.forField(
      'workspace',
      `${backend} jobs fetch their workspace from S3, and this server keeps the archive at '${uri}', ` +
        'which they cannot reach (a local server keeps archives on its own disk): run with a workspace ' +
        'against a deployed stack, whose workspace bucket the jobs read, or without one ' +
        `(txs run --workspace "")`,
    );
  }
  return { uri, bucket: uri.slice('s3://'.length, slash), key: uri.slice(slash + 1) };
}
