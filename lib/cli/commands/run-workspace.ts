/**
 * A run's workspace (`txs run`, `txs workspace`): packs the directory into its content-addressed archive
 * (`packWorkspace`) and uploads it unless the server already holds it (`POST /v1/workspaces`: to the local
 * server, or straight to a deployed stack's S3 bucket). Imported only when a command has a
 * workspace: packing loads `node:crypto` and `tar-stream`, which the start-up of every other command need not.
 *
 * @module
 */
import { createReadStream } from 'node:fs';
import { realpath } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { pipeline, Transform } from 'node:stream';
import { displayText } from '../../specs/names.js';
import type { TxsClient } from '../client.js';
import { UsageError } from '../errors.js';
import type { Invocation } from '../invocation.js';
import { type PackedWorkspace, packWorkspace } from '../workspace/archive.js';
import { describeChoice, type WorkspaceChoice } from '../workspace/choice.js';
import { WorkspaceError } from '../workspace/errors.js';
import {
  formatBytes,
  formatProgress,
  formatUploadProgress,
  throttleProgress,
} from '../workspace/progress.js';

/** Where packed archives and content hashes are kept between runs (`$XDG_CACHE_HOME/txs/workspaces`). */
function cacheDirOf(invocation: Invocation): string {
  const base = invocation.io.env.XDG_CACHE_HOME || join(invocation.io.homeDir, '.cache');
  return join(base, 'txs', 'workspaces');
}

/** Packs `dir` (relative to the caller's directory), with a progress line on stderr for a large tree. */
export async function packForRun(invocation: Invocation, dir: string): Promise<PackedWorkspace> {
  return packWorkspace(resolve(invocation.io.cwd, dir), {
    cacheDir: cacheDirOf(invocation),
    onProgress: (progress) => invocation.err(formatProgress(progress)),
  });
}

/**
 * Refuses a `.txsconfig` workspace outside the current directory (after symlinks): the `.txsconfig` of a
 * cloned repository is read too, and must not be able to ship another directory of the caller's.
 *
 * @throws UsageError naming the directory.
 */
async function checkInsideCwd(invocation: Invocation, dir: string): Promise<void> {
  const real = async (path: string) => realpath(path).catch(() => resolve(path));
  const [root, target] = await Promise.all([real(invocation.io.cwd), real(dir)]);
  const rel = relative(root, target);
  if (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel)) return;
  throw new UsageError(
    `the workspace ${displayText(dir)} set in [cli:run] of .txsconfig is outside the current directory`,
    'a .txsconfig may name only a directory inside the one you run from (e.g. workspace = src); give others with --workspace DIR',
  );
}

/**
 * Packs the chosen workspace, first saying on stderr which directory is packed (and, when `txs` chose it,
 * how to run without it). A tree over the size limit lists its largest files; when the directory was not
 * named with `--workspace`, the hint also says how to run without a workspace.
 *
 * @throws WorkspaceError as {@link packWorkspace} does.
 */
export async function packChoice(
  invocation: Invocation,
  choice: WorkspaceChoice,
  scheduler?: string,
): Promise<PackedWorkspace> {
  if (choice.source === 'config') await checkInsideCwd(invocation, choice.dir);
  invocation.err(describeChoice(choice, scheduler));
  try {
    return await packForRun(invocation, choice.dir);
  } catch (error) {
    if (!(error instanceof WorkspaceError) || error.problem !== 'too-large' || choice.source === 'flag') {
      throw error;
    }
    throw new WorkspaceError(
      error.problem,
      error.message,
      `${error.hint ?? ''}; or run without a workspace: --workspace ""`,
      error.path,
      { cause: error },
    );
  }
}

/**
 * Uploads `packed` unless the server holds it already (`POST /v1/workspaces`: an unchanged workspace costs
 * that one request and no bytes), streaming it from its file with a progress line on stderr while a large
 * archive is sent; says so on stderr when it sent it. Naming the run's `scheduler` lets the server refuse an
 * archive that run could not use before anything is sent.
 *
 * @returns whether the archive was sent (false: the server held it).
 */
export async function shipWorkspace(
  invocation: Invocation,
  client: TxsClient,
  packed: PackedWorkspace,
  scheduler?: string,
): Promise<boolean> {
  const { sha256, size, fileCount } = packed;
  const offer = await client.offerWorkspace({
    sha256,
    size,
    fileCount,
    ...(scheduler === undefined ? {} : { scheduler }),
  });
  if (offer.stored || offer.upload === undefined) return false;
  const report = throttleProgress((sent: number) => invocation.err(formatUploadProgress(sent, size)));
  await client.sendWorkspace(offer.upload, () => {
    let sent = 0;
    const counted = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        sent += chunk.length;
        report(sent);
        done(null, chunk);
      },
    });
    // A read error (the file removed meanwhile) fails the upload instead of leaving it waiting.
    return pipeline(createReadStream(packed.path), counted, () => {});
  });
  invocation.err(`uploaded workspace ${sha256} (${formatBytes(size)})`);
  return true;
}

/**
 * What a dry run shows of the archive a run would use: its hash, size, file count and largest files, and
 * where the job would fetch it from when the server said (`fetched`: a deployed stack's dry run).
 */
export function describePacked(
  packed: PackedWorkspace,
  fetched?: { archive: string; stored: boolean },
): string {
  const lines = [
    `workspace: ${packed.sha256}`,
    `  ${packed.fileCount} files, ${formatBytes(packed.uncompressedSize)} packed into ${formatBytes(packed.size)}`,
  ];
  if (fetched !== undefined) {
    lines.push(
      `  fetched by the job from ${fetched.archive} (${fetched.stored ? 'already uploaded' : 'a run uploads it first'})`,
    );
  }
  if (packed.largest.length > 0) {
    lines.push('  largest:');
    for (const file of packed.largest) {
      lines.push(`    ${formatBytes(file.size).padStart(9)}  ${displayText(file.path)}`);
    }
  }
  return lines.join('\n');
}
