/**
 * The workspace cache, so an unchanged workspace is neither read nor packed again:
 *
 * - per workspace root, each file's content SHA-256 keyed by its identity on disk (device, inode, size,
 *   modification and change times in nanoseconds). A file changed within {@link RACY_WINDOW_NS} of the
 *   moment it was hashed is read again, as git does for "racily clean" entries: a write in the same clock
 *   tick as the hash would otherwise go unnoticed;
 * - per tree (the SHA-256 of the entry list with those content hashes), the archive already built and its
 *   description.
 *
 * The directory belongs to the user (created 0700; one owned by someone else or writable by others is
 * refused, so another account cannot plant an archive). Every file is written to a temporary name and
 * renamed into place, so a crash leaves either the old record or the new one; a record that does not parse
 * or names a missing archive is a miss.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import { lstat, mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { WORKSPACE_SHA256_PATTERN } from '../../specs/workspaces.js';
import { WorkspaceError } from './errors.js';
import type { FileIdentity } from './walk.js';

/** A file modified less than this before it was hashed is hashed again on the next run (2 s: coarse clocks). */
export const RACY_WINDOW_NS = 2_000_000_000n;

/** A file's cached content hash. */
export interface FileHashRecord {
  readonly identity: FileIdentity;
  readonly sha256: string;
  /** Wall-clock time, in nanoseconds since the epoch, just before the file was read. */
  readonly hashedAtNs: string;
}

/** What the cache keeps of a built archive. */
export interface ArchiveRecord {
  readonly sha256: string;
  readonly size: number;
  readonly tarSha256: string;
  readonly uncompressedSize: number;
  readonly fileCount: number;
  readonly largest: readonly { readonly path: string; readonly size: number }[];
}

function isArchiveRecord(value: unknown): value is ArchiveRecord {
  const record = value as Partial<ArchiveRecord> | null;
  return (
    typeof record === 'object' &&
    record !== null &&
    typeof record.sha256 === 'string' &&
    WORKSPACE_SHA256_PATTERN.test(record.sha256) &&
    typeof record.tarSha256 === 'string' &&
    typeof record.size === 'number' &&
    typeof record.uncompressedSize === 'number' &&
    typeof record.fileCount === 'number' &&
    Array.isArray(record.largest)
  );
}

function sameIdentity(a: FileIdentity, b: FileIdentity): boolean {
  return (
    a.dev === b.dev &&
    a.ino === b.ino &&
    a.size === b.size &&
    a.mtimeNs === b.mtimeNs &&
    a.ctimeNs === b.ctimeNs
  );
}

/** Writes `data` to `path` through a temporary file and a rename, readable by the owner only. */
async function writeAtomically(path: string, data: string): Promise<void> {
  const temp = `${path}.${randomUUID()}.tmp`;
  try {
    await writeFile(temp, data, { mode: 0o600 });
    await rename(temp, path);
  } finally {
    await rm(temp, { force: true });
  }
}

/** A cache directory, opened by {@link WorkspaceCache.open}. */
export class WorkspaceCache {
  private constructor(readonly dir: string) {}

  /**
   * Opens (creating it 0700 if needed) the cache at `dir`.
   *
   * @throws {@link WorkspaceError} (`cache`) when `dir` is not a directory of this user that only they can write.
   */
  static async open(dir: string): Promise<WorkspaceCache> {
    // Each level is checked before anything is created inside it: a symlink or someone else's directory in
    // its place is refused, not written through.
    for (const path of [dir, join(dir, 'archives')]) {
      await mkdir(path, { recursive: true, mode: 0o700 });
      const info = await lstat(path);
      const uid = process.getuid?.();
      if (!info.isDirectory() || (uid !== undefined && info.uid !== uid) || (info.mode & 0o022) !== 0) {
        throw new WorkspaceError(
          'cache',
          `the workspace cache ${path} is not a directory that only you can write`,
          `remove it, or make it yours with mode 0700 (chmod 700 ${path})`,
        );
      }
    }
    return new WorkspaceCache(dir);
  }

  private hashesPath(rootKey: string): string {
    return join(this.dir, `files-${rootKey}.json`);
  }

  /** Where the archive with this SHA-256 is kept. */
  archivePath(sha256: string): string {
    return join(this.dir, 'archives', `${sha256}.tar.gz`);
  }

  /** A fresh temporary path next to the archives (same file system, so the final rename is atomic). */
  temporaryPath(): string {
    return join(this.dir, 'archives', `${randomUUID()}.tmp`);
  }

  /** The content hashes known for the workspace `rootKey`; empty when there are none or the file is damaged. */
  async fileHashes(rootKey: string): Promise<Map<string, FileHashRecord>> {
    try {
      const parsed: unknown = JSON.parse(await readFile(this.hashesPath(rootKey), 'utf8'));
      if (typeof parsed !== 'object' || parsed === null) return new Map();
      return new Map(Object.entries(parsed as Record<string, FileHashRecord>));
    } catch {
      return new Map();
    }
  }

  /** Replaces the content hashes kept for `rootKey`. */
  async storeFileHashes(rootKey: string, hashes: ReadonlyMap<string, FileHashRecord>): Promise<void> {
    await writeAtomically(this.hashesPath(rootKey), JSON.stringify(Object.fromEntries(hashes)));
  }

  /** The archive built for tree `treeKey`, if it is still there with its recorded size. */
  async archive(treeKey: string): Promise<(ArchiveRecord & { path: string }) | undefined> {
    try {
      const parsed: unknown = JSON.parse(
        await readFile(join(this.dir, 'archives', `${treeKey}.tree.json`), 'utf8'),
      );
      if (!isArchiveRecord(parsed)) return undefined;
      const path = this.archivePath(parsed.sha256);
      const info = await stat(path);
      return info.size === parsed.size ? { ...parsed, path } : undefined;
    } catch {
      return undefined;
    }
  }

  /** Moves the archive built at `temporary` into the cache and records it for tree `treeKey`. */
  async storeArchive(treeKey: string, record: ArchiveRecord, temporary: string): Promise<string> {
    const path = this.archivePath(record.sha256);
    await rename(temporary, path);
    await writeAtomically(join(this.dir, 'archives', `${treeKey}.tree.json`), JSON.stringify(record));
    return path;
  }
}

/**
 * The cached hash of a file, if its identity is unchanged and it was not modified just before it was hashed.
 * The change time is part of the identity, so content rewritten with its size and mtime put back is read again.
 */
export function trustedHash(record: FileHashRecord | undefined, identity: FileIdentity): string | undefined {
  if (record === undefined || typeof record.sha256 !== 'string' || record.identity === undefined)
    return undefined;
  if (!sameIdentity(record.identity, identity)) return undefined;
  try {
    const settled = BigInt(record.hashedAtNs) - RACY_WINDOW_NS;
    return BigInt(identity.mtimeNs) < settled ? record.sha256 : undefined;
  } catch {
    return undefined;
  }
}
