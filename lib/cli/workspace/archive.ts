/**
 * A workspace as a reproducible, content-addressed archive: a gzip-compressed POSIX tar (ustar, with pax
 * records for long or non-ASCII names) that any image with `sh` and `tar` unpacks with `tar -xzf`.
 *
 * The same tree gives the same bytes whoever packs it and whenever: entries depth-first in byte order of
 * names, one fixed mtime (2000-01-01, see `tar-writer.ts`), owner and group 0 with empty names, modes 0644 or 0755 (by the
 * executable bit) for files, 0755 for directories; gzip without a file name or time and with the header's
 * OS byte fixed to Unix. The compressed bytes depend on the zlib build as well as on the tree, so the result
 * also carries `tarSha256`, the hash of the uncompressed tar, which depends on the tree alone.
 *
 * What goes in is decided by {@link walkWorkspace} (ignore files, excluded names, symlinks). The archive is
 * the format only; shipping it to jobs is not built yet.
 *
 * @module
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdtemp, realpath, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ArchiveRecord, type FileHashRecord, trustedHash, WorkspaceCache } from './cache.js';
import { changedError, WorkspaceError } from './errors.js';
import { type HashedFile, hashFiles, RETAIN_BYTES, readFileChunks } from './file-content.js';
import { formatBytes, type PackProgress, throttleProgress } from './progress.js';
import { type ContentWriter, writeArchive } from './tar-writer.js';
import { type FileEntry, isFile, type WalkResult, type WorkspaceEntry, walkWorkspace } from './walk.js';

/** The default limit on the bytes of file content in a workspace: 500 MiB, Ray's limit for a working_dir. */
export const DEFAULT_MAX_BYTES = 500 * 1024 * 1024;

/** The gzip level used unless told otherwise (zlib's default). */
export const DEFAULT_GZIP_LEVEL = 6;

/** How many of the largest files a result and a size error list. */
export const LARGEST_COUNT = 10;

/** Options of {@link packWorkspace}. */
export interface PackOptions {
  /** The limit on the bytes of file content; over it, nothing is read and a {@link WorkspaceError} lists the largest. */
  readonly maxBytes?: number;
  /**
   * A directory to keep content hashes and archives in between runs (created 0700). With it, an unchanged
   * workspace is neither read nor packed again, and the archive is kept there.
   */
  readonly cacheDir?: string;
  /**
   * Without `cacheDir`: the existing directory to write the archive into. Without either, the archive goes
   * to a new temporary directory (`txs-workspace-*`) that the caller removes.
   */
  readonly outDir?: string;
  /** The gzip level, 1 (fastest) to 9 (smallest). Part of what the bytes depend on. */
  readonly gzipLevel?: number;
  /** Called with progress at most every 500 ms, never during the first one. */
  readonly onProgress?: (progress: PackProgress) => void;
  /** The interval between progress reports, and the quiet time before the first (default 500 ms). */
  readonly progressIntervalMs?: number;
}

/** A file and its size, as listed in a result or a size error. */
export interface SizedPath {
  readonly path: string;
  readonly size: number;
}

/** A packed workspace. */
export interface PackedWorkspace {
  /** The SHA-256 of the archive's bytes (hex): its content-addressed name. */
  readonly sha256: string;
  /** Bytes of the archive. */
  readonly size: number;
  /** The SHA-256 of the uncompressed tar: the same for the same tree on any machine and zlib. */
  readonly tarSha256: string;
  /** Bytes of file content packed (what {@link PackOptions.maxBytes} limits). */
  readonly uncompressedSize: number;
  /** Regular files packed (directories and symlinks not counted). */
  readonly fileCount: number;
  /** The largest files, largest first (at most {@link LARGEST_COUNT}). */
  readonly largest: readonly SizedPath[];
  /** The archive file, named `<sha256>.tar.gz`. */
  readonly path: string;
  /** Whether the archive came from the cache, with no file read. */
  readonly cached: boolean;
  /** Sockets, FIFOs and devices found and left out. */
  readonly skipped: WalkResult['skipped'];
}

function bySizeThenPath(a: SizedPath, b: SizedPath): number {
  return b.size - a.size || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
}

/** The largest files, and the largest directories by the content under them. */
function largestPaths(files: readonly FileEntry[]): { files: SizedPath[]; directories: SizedPath[] } {
  const directories = new Map<string, number>();
  for (const file of files) {
    for (let slash = file.path.indexOf('/'); slash >= 0; slash = file.path.indexOf('/', slash + 1)) {
      const dir = file.path.slice(0, slash);
      directories.set(dir, (directories.get(dir) ?? 0) + file.size);
    }
  }
  return {
    files: files
      .map(({ path, size }) => ({ path, size }))
      .sort(bySizeThenPath)
      .slice(0, LARGEST_COUNT),
    directories: [...directories]
      .map(([path, size]) => ({ path: `${path}/`, size }))
      .sort(bySizeThenPath)
      .slice(0, LARGEST_COUNT),
  };
}

/** Refuses a workspace over the limit, listing what to leave out. */
function checkSize(root: string, files: readonly FileEntry[], total: number, maxBytes: number): void {
  if (total <= maxBytes) return;
  const largest = largestPaths(files);
  const lines = [...largest.directories, ...largest.files]
    .sort(bySizeThenPath)
    .slice(0, LARGEST_COUNT)
    .map(({ path, size }) => `  ${formatBytes(size).padStart(10)}  ${path}`);
  const example = largest.directories[0]?.path.slice(0, -1) ?? largest.files[0]?.path ?? 'data';
  throw new WorkspaceError(
    'too-large',
    `workspace ${root} holds ${formatBytes(total)} of files, over the ${formatBytes(maxBytes)} limit; the largest:\n${lines.join('\n')}`,
    `leave out what the job does not need: add a line such as \`${example}\` to .torchxignore (or .gitignore)`,
  );
}

/** The SHA-256 of the list of entries with their content hashes: what the archive's bytes follow from. */
function treeKey(
  entries: readonly WorkspaceEntry[],
  hashes: ReadonlyMap<string, string>,
  gzipLevel: number,
): string {
  const hash = createHash('sha256').update(`txs-workspace-v1 gzip=${gzipLevel}\n`);
  for (const entry of entries) {
    const content = entry.type === 'file' ? hashes.get(entry.path) : entry.linkname;
    hash.update(`${JSON.stringify([entry.type, entry.path, entry.mode, entry.size, content ?? ''])}\n`);
  }
  return hash.digest('hex');
}

/**
 * Packs the workspace at `dir` into a reproducible `.tar.gz` named by its SHA-256.
 *
 * @throws {@link WorkspaceError} when `dir` is missing or not a directory (`missing`, `not-a-directory`),
 *   a file or directory cannot be read (`unreadable`, naming it), a symlink points out of the tree
 *   (`symlink-outside`), the files exceed `maxBytes` (`too-large`, listing the largest files and
 *   directories), a file changes while it is packed (`changed`), or the cache directory is unsafe (`cache`).
 */
export async function packWorkspace(dir: string, options: PackOptions = {}): Promise<PackedWorkspace> {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const gzipLevel = options.gzipLevel ?? DEFAULT_GZIP_LEVEL;
  const report =
    options.onProgress === undefined
      ? () => {}
      : throttleProgress(options.onProgress, options.progressIntervalMs);
  const walk = await walkWorkspace(dir, options.cacheDir);
  const files = walk.entries.filter(isFile);
  const total = files.reduce((sum, file) => sum + file.size, 0);
  checkSize(dir, files, total, maxBytes);

  const cache = options.cacheDir === undefined ? undefined : await WorkspaceCache.open(options.cacheDir);
  const rootKey = createHash('sha256')
    .update(await realpath(walk.root))
    .digest('hex');
  const known = cache === undefined ? new Map<string, FileHashRecord>() : await cache.fileHashes(rootKey);
  const records = new Map<string, FileHashRecord>();
  const hashes = new Map<string, string>();
  const unknown = files.filter((file) => {
    const cached = trustedHash(known.get(file.path), file.identity);
    if (cached === undefined) return true;
    hashes.set(file.path, cached);
    records.set(file.path, known.get(file.path) as FileHashRecord);
    return false;
  });

  // With hashes to go on, hash the files the cache does not know and look for the archive of that tree.
  // Without (no cache, or a first run), there is nothing to look up: the files are hashed as they are packed.
  let read = new Map<string, HashedFile>();
  if (cache !== undefined && known.size > 0) {
    const hashing = { files: 0, bytes: 0, totalFiles: unknown.length, totalBytes: 0 };
    for (const file of unknown) hashing.totalBytes += file.size;
    read = await hashFiles(walk.root, unknown, RETAIN_BYTES, (file) => {
      hashing.files += 1;
      hashing.bytes += file.size;
      report({ phase: 'hashing', ...hashing });
    });
    for (const file of unknown) {
      const { sha256, hashedAtNs } = read.get(file.path) as HashedFile;
      hashes.set(file.path, sha256);
      records.set(file.path, { identity: file.identity, sha256, hashedAtNs });
    }
    const hit = await cache.archive(treeKey(walk.entries, hashes, gzipLevel));
    if (hit !== undefined) {
      // Rewritten only when it changed: a new hash, or a file gone.
      if (unknown.length > 0 || known.size !== records.size) await cache.storeFileHashes(rootKey, records);
      return { ...hit, cached: true, skipped: walk.skipped };
    }
  }

  // A file kept from hashing is written from memory; one hashed before must still hash the same; any other
  // is hashed as it is written.
  const writeContent: ContentWriter = async (file, write) => {
    const chunks = read.get(file.path)?.chunks;
    if (chunks !== undefined) {
      for (const chunk of chunks) await write(chunk);
      return;
    }
    const hashedAtNs = (BigInt(Date.now()) * 1_000_000n).toString();
    const sha256 = await readFileChunks(walk.root, file, write);
    const expected = hashes.get(file.path);
    if (expected === undefined) {
      hashes.set(file.path, sha256);
      records.set(file.path, { identity: file.identity, sha256, hashedAtNs });
    } else if (sha256 !== expected) {
      throw changedError(file.path);
    }
  };
  const scratch =
    cache !== undefined || options.outDir !== undefined
      ? undefined
      : await mkdtemp(join(tmpdir(), 'txs-workspace-'));
  const outDir = options.outDir ?? scratch;
  const temporary = cache?.temporaryPath() ?? join(outDir as string, `.${randomUUID()}.tmp`);
  const packing = { files: 0, bytes: 0, totalFiles: files.length, totalBytes: total };
  try {
    const built = await writeArchive(walk.entries, temporary, gzipLevel, writeContent, (file) => {
      packing.files += 1;
      packing.bytes += file.size;
      report({ phase: 'packing', ...packing });
    });
    // Described only for a new archive: a cached one carries its description (an unchanged re-run sorts nothing).
    const largest = largestPaths(files).files;
    const record: ArchiveRecord = { ...built, uncompressedSize: total, fileCount: files.length, largest };
    let path: string;
    if (cache === undefined) {
      path = await moveInto(temporary, join(outDir as string, `${built.sha256}.tar.gz`));
    } else {
      path = await cache.storeArchive(treeKey(walk.entries, hashes, gzipLevel), record, temporary);
      await cache.storeFileHashes(rootKey, records);
    }
    return { ...record, path, cached: false, skipped: walk.skipped };
  } catch (error) {
    await rm(temporary, { force: true });
    if (scratch !== undefined) await rm(scratch, { recursive: true, force: true });
    throw error;
  }
}

async function moveInto(from: string, to: string): Promise<string> {
  await rename(from, to);
  return to;
}
