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

/** A command {@link unpackThenRun} made, taken apart. */
export interface CommandInWorkspace {
  archivePath: string;
  entrypoint: string;
  args: string[];
}

/**
 * The archive path, entrypoint and arguments of a command {@link unpackThenRun} made; undefined for any other
 * command. Describe uses it to show a job's role as it was given, not the unpacking wrapper.
 *
 * @example
 * ```ts
 * commandInWorkspace(unpackThenRun('/w/a.tar.gz', 'python', ['train.py']));
 * // { archivePath: '/w/a.tar.gz', entrypoint: 'python', args: ['train.py'] }
 * commandInWorkspace(['python', 'train.py']); // undefined
 * ```
 */
export function commandInWorkspace(command: readonly string[]): CommandInWorkspace | undefined {
  const wrapper = unpackThenRun('', '', []);
  if (command.length < wrapper.length || wrapper.some((part, i) => i < 3 && command[i] !== part)) {
    return undefined;
  }
  const [archivePath = '', entrypoint = '', ...args] = command.slice(3);
  return { archivePath, entrypoint, args };
}

/**
 * The command a role was given: `command` itself, or the entrypoint and arguments inside it when
 * {@link unpackThenRun} made it (describe shows a role as it was given, not the unpacking wrapper).
 */
export function givenCommand(command: readonly string[]): string[] {
  const inWorkspace = commandInWorkspace(command);
  return inWorkspace === undefined ? [...command] : [inWorkspace.entrypoint, ...inWorkspace.args];
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
/** The name of the volume a job's containers share the archive through (Batch task volume, pod emptyDir). */
export const WORKSPACE_VOLUME = 'txs-workspace';
/** The name of the container that copies the archive from S3 before the role's container starts. */
export const FETCH_CONTAINER_NAME = 'workspace-fetch';

/**
 * The arguments of the AWS CLI (the fetch image's `aws`) that copy the archive at `uri` to
 * {@link mountedArchivePath}, printing only errors (which the job's fetch logs then show).
 */
export function fetchArchiveArgs(uri: string, sha256: string): string[] {
  return ['s3', 'cp', '--only-show-errors', uri, mountedArchivePath(sha256)];
}

/** The path of the archive `<sha256>.tar.gz` inside the container, under {@link WORKSPACE_MOUNT_PATH}. */
export function mountedArchivePath(sha256: string): string {
  return `${WORKSPACE_MOUNT_PATH}/${sha256}.tar.gz`;
}
