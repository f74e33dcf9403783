/** Workspace archives for local_cwd tests: built with tar-stream, stored with their index as the server does. */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { pack } from 'tar-stream';
import {
  checkWorkspaceArchive,
  workspaceIndexPath,
} from '../../lib/schedulers/local-cwd/workspace-unpack.js';
import type { JobWorkspace } from '../../lib/specs/index.js';

/** One entry of a test archive. */
export type Entry = {
  name: string;
  type?: 'file' | 'directory' | 'symlink' | 'link';
  body?: string;
  linkname?: string;
  mode?: number;
};

/** The bytes of a tar.gz of `entries`, in order. */
export async function tarGzOf(entries: Entry[]): Promise<Buffer> {
  const tar = pack();
  const chunks: Buffer[] = [];
  tar.on('data', (chunk) => chunks.push(chunk as Buffer));
  const ended = new Promise<void>((resolve) => tar.on('end', () => resolve()));
  for (const entry of entries) {
    const { body, ...header } = entry;
    tar.entry({ type: 'file', mode: 0o644, ...header }, body ?? '');
  }
  tar.finalize();
  await ended;
  return gzipSync(Buffer.concat(chunks));
}

/** Stores `bytes` as `<dir>/<sha256>.tar.gz` with its index beside it, as the local server's PUT does. */
export async function storeArchive(dir: string, bytes: Buffer): Promise<JobWorkspace> {
  await mkdir(dir, { recursive: true });
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  const archive = path.join(dir, `${sha256}.tar.gz`);
  await writeFile(archive, bytes);
  const index = await checkWorkspaceArchive(archive);
  await writeFile(workspaceIndexPath(archive), JSON.stringify(index));
  return { sha256, size: bytes.length, fileCount: index.fileCount, archive };
}

/**
 * The workspace of `bytes` with its archive replaced by a FIFO (its index stays): unpacking it waits until
 * the test writes the bytes into the FIFO.
 */
export async function blockedArchive(dir: string, bytes: Buffer): Promise<JobWorkspace> {
  const workspace = await storeArchive(dir, bytes);
  spawnSync('rm', [workspace.archive]);
  const made = spawnSync('mkfifo', [workspace.archive]);
  if (made.status !== 0) throw new Error(`mkfifo failed: ${made.stderr.toString()}`);
  return workspace;
}
