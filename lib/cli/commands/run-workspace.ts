/**
 * `txs run --workspace DIR`: packs the directory into its content-addressed archive (`packWorkspace`) and
 * uploads it to the local server unless the server already holds it. Imported only when a run has a
 * workspace: packing loads `node:crypto` and `tar-stream`, which the start-up of every other command need not.
 *
 * @module
 */
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { displayText } from '../../specs/names.js';
import { WORKSPACE_SCHEDULERS } from '../../specs/schema.js';
import type { TxsClient } from '../client.js';
import { UsageError } from '../errors.js';
import type { Invocation } from '../invocation.js';
import { type PackedWorkspace, packWorkspace } from '../workspace/archive.js';
import { formatBytes, formatProgress } from '../workspace/progress.js';

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

/** Uploads `packed` unless the server holds it already; says so on stderr when it sends it. */
export async function shipWorkspace(
  invocation: Invocation,
  client: TxsClient,
  packed: PackedWorkspace,
): Promise<void> {
  const sent = await client.uploadWorkspace(packed.sha256, () => readFile(packed.path));
  if (sent) invocation.err(`uploaded workspace ${packed.sha256} (${formatBytes(packed.size)})`);
}

/** What a dry run shows of the archive a run would use: its hash, size, file count and largest files. */
export function describePacked(packed: PackedWorkspace): string {
  const lines = [
    `workspace: ${packed.sha256}`,
    `  ${packed.fileCount} files, ${formatBytes(packed.uncompressedSize)} packed into ${formatBytes(packed.size)}`,
  ];
  if (packed.largest.length > 0) {
    lines.push('  largest:');
    for (const file of packed.largest) {
      lines.push(`    ${formatBytes(file.size).padStart(9)}  ${displayText(file.path)}`);
    }
  }
  return lines.join('\n');
}
