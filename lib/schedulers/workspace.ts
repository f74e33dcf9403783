/**
 * How a job starts in its workspace on a scheduler that runs images: the archive is laid over the image's
 * working directory, then the role's entrypoint runs there — what TorchX's Docker workspace did with
 * `COPY . .` on top of the role's image, with no image built. The image needs only `sh` and `tar`.
 *
 * @module
 */

/**
 * The command that unpacks the archive at `archivePath` (a gzip-compressed tar, `<sha256>.tar.gz`) into the
 * current directory, then replaces itself with `entrypoint args…` (`exec`: the entrypoint receives the
 * signals and its exit status is the job's). Arguments pass through as they are (`"$@"`): no quoting, no
 * word splitting. A failed unpack fails the job with tar's exit status before the entrypoint runs.
 *
 * @example
 * ```ts
 * unpackThenRun('/txs-workspace/3f2a….tar.gz', 'python', ['train.py', '--lr', '0.1']);
 * // ['sh', '-c', 'tar -xzf "$0" && exec "$@"', '/txs-workspace/3f2a….tar.gz', 'python', 'train.py', '--lr', '0.1']
 * ```
 */
export function unpackThenRun(archivePath: string, entrypoint: string, args: readonly string[]): string[] {
  return ['sh', '-c', 'tar -xzf "$0" && exec "$@"', archivePath, entrypoint, ...args];
}

/**
 * The default image of the container that copies a workspace archive from S3 into the job before it starts
 * (Kubernetes' init container, Batch's fetch container): the AWS CLI, pinned; its entrypoint is `aws`, and it
 * reads credentials the way the AWS SDKs do (on EKS: the pod's service account through IRSA or Pod Identity).
 * A deployment can name another, e.g. a copy in its own registry for clusters without internet access.
 */
export const DEFAULT_WORKSPACE_FETCH_IMAGE = 'public.ecr.aws/aws-cli/aws-cli:2.31.23';

/** Where a job's container sees the directory holding the workspace archive (a volume or a mount). */
export const WORKSPACE_MOUNT_PATH = '/txs-workspace';

/** The path of the archive `<sha256>.tar.gz` inside the container, under {@link WORKSPACE_MOUNT_PATH}. */
export function mountedArchivePath(sha256: string): string {
  return `${WORKSPACE_MOUNT_PATH}/${sha256}.tar.gz`;
}
