/**
 * A workspace as a reproducible, content-addressed archive: a gzip-compressed POSIX tar (ustar, with pax
 * records for long or non-ASCII names) that any image with `sh` and `tar` unpacks with `tar -xzf`.
 *
 * The same tree gives the same bytes whoever packs it and whenever: entries depth-first in byte order of
 * names, every mtime {@link ARCHIVE_MTIME}, owner and group 0 with empty names, modes 0644 or 0755 (by the
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
import { createWriteStream, constants as fsConstants } from 'node:fs';
import { mkdtemp, open, realpath, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { type Pack, pack as tarPack } from 'tar-stream';
import { type ArchiveRecord, type FileHashRecord, trustedHash, WorkspaceCache } from './cache.js';
import { changedError, ignoreHint, WorkspaceError } from './errors.js';
import { formatBytes, type PackProgress, throttleProgress } from './progress.js';
import { type WalkResult, type WorkspaceEntry, walkWorkspace } from './walk.js';

/** The default limit on the bytes of file content in a workspace: 500 MiB, Ray's limit for a working_dir. */
export const DEFAULT_MAX_BYTES = 500 * 1024 * 1024;

/**
 * The modification time of every entry: 2000-01-01T00:00:00Z. Not 0: zip (and so wheel builds run inside
 * the job) refuses times before 1980, in any time zone.
 */
export const ARCHIVE_MTIME = new Date(Date.UTC(2000, 0, 1));

/** The gzip level used unless told otherwise (zlib's default). */
export const DEFAULT_GZIP_LEVEL = 6;

/** How many of the largest files a result and a size error list. */
export const LARGEST_COUNT = 10;

const CHUNK_BYTES = 1024 * 1024;
const GZIP_OS_BYTE = 9;
const GZIP_OS_UNIX = 3;

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

type FileEntry = WorkspaceEntry & { type: 'file'; identity: NonNullable<WorkspaceEntry['identity']> };

function isFile(entry: WorkspaceEntry): entry is FileEntry {
  return entry.type === 'file';
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

/**
 * Reads a file of the workspace in chunks, without following a symlink put in its place, handing each
 * chunk (a fresh buffer) to `onChunk`; returns the content's SHA-256.
 *
 * @throws {@link WorkspaceError} `unreadable` when it cannot be opened, `changed` when it is no longer the
 *   regular file of `entry.size` bytes the walk saw.
 */
async function readFileChunks(
  root: string,
  entry: FileEntry,
  onChunk: (chunk: Buffer) => Promise<void> | void,
): Promise<string> {
  const changed = () => changedError(entry.path);
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(join(root, entry.path), fsConstants.O_RDONLY | (fsConstants.O_NOFOLLOW ?? 0));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP' || code === 'ENOENT') throw changed();
    throw new WorkspaceError(
      'unreadable',
      `cannot read ${entry.path} in the workspace (${code ?? String(error)})`,
      ignoreHint(entry.path),
      entry.path,
      {
        cause: error,
      },
    );
  }
  try {
    const info = await handle.stat();
    if (!info.isFile() || info.size !== entry.size) throw changed();
    const hash = createHash('sha256');
    let remaining = entry.size;
    while (remaining > 0) {
      const chunk = Buffer.allocUnsafe(Math.min(remaining, CHUNK_BYTES));
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
      if (bytesRead === 0) throw changed();
      const data = bytesRead === chunk.length ? chunk : chunk.subarray(0, bytesRead);
      hash.update(data);
      await onChunk(data);
      remaining -= bytesRead;
    }
    const { bytesRead: extra } = await handle.read(Buffer.alloc(1), 0, 1, null);
    if (extra !== 0) throw changed();
    return hash.digest('hex');
  } finally {
    await handle.close();
  }
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

/** A pass-through that hashes and counts the bytes; when `patchGzipOs`, it first fixes the gzip header's OS byte. */
class Tap extends Transform {
  readonly hash = createHash('sha256');
  bytes = 0;
  constructor(private readonly patchGzipOs: boolean) {
    super();
  }
  override _transform(
    chunk: Buffer,
    _encoding: BufferEncoding,
    done: (error?: Error | null, data?: Buffer) => void,
  ) {
    let data = chunk;
    if (this.patchGzipOs && this.bytes <= GZIP_OS_BYTE && this.bytes + chunk.length > GZIP_OS_BYTE) {
      data = Buffer.from(chunk);
      data[GZIP_OS_BYTE - this.bytes] = GZIP_OS_UNIX;
    }
    this.hash.update(data);
    this.bytes += data.length;
    done(null, data);
  }
}

/** Resolves when the tar entry completes; rejects when it or the archive fails. */
function entryDone(
  archive: Pack,
  entry: WorkspaceEntry,
): { sink: ReturnType<Pack['entry']>; done: Promise<void> } {
  let sink: ReturnType<Pack['entry']> | undefined;
  const done = new Promise<void>((resolve, reject) => {
    sink = archive.entry(
      {
        name: entry.type === 'directory' ? `${entry.path}/` : entry.path,
        type: entry.type,
        size: entry.size,
        mode: entry.mode,
        mtime: ARCHIVE_MTIME,
        uid: 0,
        gid: 0,
        uname: '',
        gname: '',
        ...(entry.linkname === undefined ? {} : { linkname: entry.linkname }),
      },
      (error) => (error ? reject(error) : resolve()),
    );
  });
  return { sink: sink as ReturnType<Pack['entry']>, done };
}

/** Writes one chunk into a tar entry, waiting while the archive is backed up. */
function writeChunk(sink: ReturnType<Pack['entry']>, chunk: Buffer): Promise<void> {
  if (sink.write(chunk)) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const settle = (error?: Error) => {
      sink.off('drain', onDrain);
      sink.off('close', onClose);
      if (error) reject(error);
      else resolve();
    };
    const onDrain = () => settle();
    const onClose = () => settle(new Error('the archive stream closed'));
    sink.on('drain', onDrain);
    sink.on('close', onClose);
  });
}

/** Writes the archive of `entries` to `path`; checks each file still has the content hashed before. */
async function writeArchive(
  root: string,
  entries: readonly WorkspaceEntry[],
  hashes: ReadonlyMap<string, string>,
  path: string,
  gzipLevel: number,
  progress: (done: { files: number; bytes: number }) => void,
): Promise<{ sha256: string; size: number; tarSha256: string }> {
  const archive = tarPack();
  const tarTap = new Tap(false);
  const gzipTap = new Tap(true);
  const written = pipeline(
    archive as unknown as AsyncIterable<Buffer>,
    tarTap,
    createGzip({ level: gzipLevel }),
    gzipTap,
    createWriteStream(path, { mode: 0o600 }),
  );
  const feed = async () => {
    let files = 0;
    let bytes = 0;
    for (const entry of entries) {
      const { sink, done } = entryDone(archive, entry);
      if (isFile(entry)) {
        const sha256 = await readFileChunks(root, entry, (chunk) => writeChunk(sink, chunk));
        if (sha256 !== hashes.get(entry.path)) {
          throw changedError(entry.path);
        }
        files += 1;
        bytes += entry.size;
        progress({ files, bytes });
      }
      sink.end(null);
      await done;
    }
    archive.finalize();
  };
  try {
    await Promise.all([
      feed().catch((error: unknown) => {
        archive.destroy(error as Error);
        throw error;
      }),
      written,
    ]);
  } catch (error) {
    await rm(path, { force: true });
    throw error;
  }
  return { sha256: gzipTap.hash.digest('hex'), size: gzipTap.bytes, tarSha256: tarTap.hash.digest('hex') };
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
  const walk = await walkWorkspace(dir);
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
  const toHash = { files: 0, bytes: 0, totalFiles: unknown.length, totalBytes: 0 };
  for (const file of unknown) toHash.totalBytes += file.size;
  for (const file of unknown) {
    const hashedAtNs = (BigInt(Date.now()) * 1_000_000n).toString();
    const sha256 = await readFileChunks(walk.root, file, () => {});
    hashes.set(file.path, sha256);
    records.set(file.path, { identity: file.identity, sha256, hashedAtNs });
    toHash.files += 1;
    toHash.bytes += file.size;
    report({ phase: 'hashing', ...toHash });
  }

  const key = treeKey(walk.entries, hashes, gzipLevel);
  const described = { uncompressedSize: total, fileCount: files.length, largest: largestPaths(files).files };
  const hit = await cache?.archive(key);
  if (cache !== undefined) await cache.storeFileHashes(rootKey, records);
  if (hit !== undefined) return { ...hit, cached: true, skipped: walk.skipped };

  const scratch =
    cache !== undefined || options.outDir !== undefined
      ? undefined
      : await mkdtemp(join(tmpdir(), 'txs-workspace-'));
  const outDir = options.outDir ?? scratch;
  const temporary = cache?.temporaryPath() ?? join(outDir as string, `.${randomUUID()}.tmp`);
  try {
    const built = await writeArchive(walk.root, walk.entries, hashes, temporary, gzipLevel, (done) =>
      report({ phase: 'packing', ...done, totalFiles: files.length, totalBytes: total }),
    );
    const record: ArchiveRecord = { ...built, ...described };
    const path =
      cache === undefined
        ? await moveInto(temporary, join(outDir as string, `${built.sha256}.tar.gz`))
        : await cache.storeArchive(key, record, temporary);
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
