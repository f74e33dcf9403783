/**
 * Reading the files of a workspace: one file in chunks without following a symlink put in its place, and
 * many files hashed a few at a time, keeping their contents in memory up to a budget so the archive can be
 * written without reading them again.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import { constants as fsConstants } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { changedError, ignoreHint, WorkspaceError } from './errors.js';
import type { FileEntry } from './walk.js';

const CHUNK_BYTES = 1024 * 1024;

/** Files read at once while hashing: enough to keep libuv's four threads busy. */
const HASH_CONCURRENCY = 8;

/** The bytes of file content kept in memory between hashing and packing (larger trees are read twice). */
export const RETAIN_BYTES = 128 * 1024 * 1024;

/**
 * Reads a file of the workspace in chunks, without following a symlink put in its place, handing each
 * chunk (a fresh buffer) to `onChunk`; returns the content's SHA-256.
 *
 * @throws {@link WorkspaceError} `unreadable` when it cannot be opened, `changed` when it is no longer the
 *   regular file of `entry.size` bytes the walk saw.
 */
export async function readFileChunks(
  root: string,
  entry: FileEntry,
  onChunk: (chunk: Buffer) => Promise<void> | void,
): Promise<string> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(join(root, entry.path), fsConstants.O_RDONLY | (fsConstants.O_NOFOLLOW ?? 0));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP' || code === 'ENOENT') throw changedError(entry.path);
    throw new WorkspaceError(
      'unreadable',
      `cannot read ${entry.path} in the workspace (${code ?? String(error)})`,
      ignoreHint(entry.path),
      entry.path,
      { cause: error },
    );
  }
  try {
    const info = await handle.stat();
    if (!info.isFile() || info.size !== entry.size) throw changedError(entry.path);
    const hash = createHash('sha256');
    let remaining = entry.size;
    while (remaining > 0) {
      const chunk = Buffer.allocUnsafe(Math.min(remaining, CHUNK_BYTES));
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
      if (bytesRead === 0) throw changedError(entry.path);
      const data = bytesRead === chunk.length ? chunk : chunk.subarray(0, bytesRead);
      hash.update(data);
      await onChunk(data);
      remaining -= bytesRead;
    }
    const { bytesRead: extra } = await handle.read(Buffer.alloc(1), 0, 1, null);
    if (extra !== 0) throw changedError(entry.path);
    return hash.digest('hex');
  } finally {
    await handle.close();
  }
}

/** A file read by {@link hashFiles}. */
export interface HashedFile {
  readonly sha256: string;
  /** Wall-clock time, in nanoseconds since the epoch, just before the file was opened. */
  readonly hashedAtNs: string;
  /** The content, when it fitted in the memory budget. */
  readonly chunks?: readonly Buffer[];
}

/**
 * Hashes `files`, {@link HASH_CONCURRENCY} at a time, keeping the contents of the first ones up to
 * `retainBytes` in all; `onFile` is called after each file.
 */
export async function hashFiles(
  root: string,
  files: readonly FileEntry[],
  retainBytes: number,
  onFile: (file: FileEntry) => void,
): Promise<Map<string, HashedFile>> {
  const hashed = new Map<string, HashedFile>();
  let budget = retainBytes;
  let next = 0;
  const worker = async () => {
    for (let index = next++; index < files.length; index = next++) {
      const file = files[index] as FileEntry;
      const retain = file.size <= budget;
      if (retain) budget -= file.size;
      const chunks: Buffer[] = [];
      const hashedAtNs = (BigInt(Date.now()) * 1_000_000n).toString();
      const sha256 = await readFileChunks(root, file, retain ? (chunk) => void chunks.push(chunk) : () => {});
      hashed.set(file.path, retain ? { sha256, hashedAtNs, chunks } : { sha256, hashedAtNs });
      onFile(file);
    }
  };
  await Promise.all(Array.from({ length: Math.min(HASH_CONCURRENCY, files.length) }, worker));
  return hashed;
}
