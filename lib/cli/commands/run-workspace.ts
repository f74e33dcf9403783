/**
 * `txs run --workspace DIR`: packs the directory into its content-addressed archive (`packWorkspace`) and
 * uploads it unless the server already holds it (`POST /v1/workspaces`: to the local server, or straight to
 * a deployed stack's S3 bucket). Imported only when a run has a
 * workspace: packing loads `node:crypto` and `tar-stream`, which the start-up of every other command need not.
 *
 * @module
 */
import { createReadStream } from 'node:fs';
import { join, resolve } from 'node:path';
import { pipeline, Transform } from 'node:stream';
import { displayText } from '../../specs/names.js';
import { WORKSPACE_SCHEDULERS } from '../../specs/schema.js';
import type { TxsClient } from '../client.js';
import { UsageError } from '../errors.js';
import type { Invocation } from '../invocation.js';
import { type PackedWorkspace, packWorkspace } from '../workspace/archive.js';
import {
  formatBytes,
  formatProgress,
  formatUploadProgress,
  throttleProgress,
} from '../workspace/progress.js';

/**
 * Refuses a workspace for a scheduler that cannot take one yet (before anything is packed).
 *
 * @throws UsageError naming the scheduler.
 */
export function checkWorkspaceScheduler(scheduler: string): void {
  if (!WORKSPACE_SCHEDULERS.includes(scheduler)) {
    throw new UsageError(
      `the ${scheduler} scheduler cannot take a workspace yet (only ${WORKSPACE_SCHEDULERS.join(', ')} can)`,
      'run without one: --workspace ""',
    );
  }
}

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
 * Uploads `packed` unless the server holds it already (`POST /v1/workspaces`: an unchanged workspace costs
 * that one request and no bytes), streaming it from its file with a progress line on stderr while a large
 * archive is sent; says so on stderr when it sent it.
 */
export async function shipWorkspace(
  invocation: Invocation,
  client: TxsClient,
  packed: PackedWorkspace,
): Promise<void> {
  const { sha256, size, fileCount } = packed;
  const offer = await client.offerWorkspace({ sha256, size, fileCount });
  if (offer.stored || offer.upload === undefined) return;
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
