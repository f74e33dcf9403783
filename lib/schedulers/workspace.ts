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
