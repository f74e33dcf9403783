/**
 * Workspace archives on this machine (gzip-compressed tars): checking one once, when it is stored, and
 * unpacking it into a run's own directory when the run starts. Both refuse anything that could write
 * outside the directory: absolute names, `..` segments, entries under a symlink of the archive, links whose
 * target leaves the directory, hard links and special files. Symlinks are created last, so no entry is
 * written through one.
 *
 * The check writes an index beside the archive (`<sha256>.json` beside `<sha256>.tar.gz`): the file count
 * and the names a replica's entrypoint may resolve to, so a run is validated without reading the archive.
 *
 * @module
 */
import { createReadStream, createWriteStream, readFileSync } from 'node:fs';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { isAbsolute, join, posix, relative, sep } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { extract as tarExtract } from 'tar-stream';

/** File writes in flight at once while the archive is read. */
const PARALLEL_WRITES = 16;

/** Files larger than this (bytes) are streamed to disk rather than held in memory whole. */
export const STREAMED_FILE_BYTES = 8 * 1024 * 1024;

/** What an unpacked archive held. */
export interface Extracted {
  /** Regular files written. */
  fileCount: number;
}

/** What a checked archive holds: written beside it as JSON ({@link workspaceIndexPath}). */
export interface WorkspaceIndex {
  version: 1;
  /** Regular files. */
  fileCount: number;
  /** Regular files with an executable bit, as relative `/`-separated names. */
  executables: string[];
  /** Symlinks, as relative names (what they point to is checked when the replica starts). */
  links: string[];
}

/** Thrown when an archive has an entry that cannot be unpacked safely (or is not a tar.gz at all). */
export class UnsafeArchiveError extends Error {}

/** Where the index of the archive at `archive` (`…/<sha256>.tar.gz`) is kept: `…/<sha256>.json`. */
export function workspaceIndexPath(archive: string): string {
  return `${archive.replace(/\.tar\.gz$/, '')}.json`;
}

/**
 * The index of the archive at `archive`, or undefined when it has none (it was not checked) or the index
 * cannot be read.
 */
export function readWorkspaceIndex(archive: string): WorkspaceIndex | undefined {
  try {
    const index = JSON.parse(readFileSync(workspaceIndexPath(archive), 'utf8')) as Partial<WorkspaceIndex>;
    if (
      index.version !== 1 ||
      typeof index.fileCount !== 'number' ||
      !Array.isArray(index.executables) ||
      !Array.isArray(index.links)
    ) {
      return undefined;
    }
    return index as WorkspaceIndex;
  } catch {
    return undefined;
  }
}

/** The entry's name as a relative path without `.` segments, or an error saying why it is refused. */
function safeName(name: string): string {
  const trimmed = name.replace(/\/+$/, '');
  if (trimmed === '' || trimmed.startsWith('/') || isAbsolute(trimmed)) {
    throw new UnsafeArchiveError(`entry ${JSON.stringify(name)} is an absolute or empty path`);
  }
  const segments = trimmed.split('/').filter((segment) => segment !== '.' && segment !== '');
  if (segments.includes('..') || segments.length === 0 || trimmed.includes('\0')) {
    throw new UnsafeArchiveError(`entry ${JSON.stringify(name)} climbs out of the workspace with ..`);
  }
  return segments.join('/');
}

/** True when `path` (relative, `/`-separated) is `ancestor` or under it. */
function isUnder(path: string, ancestor: string): boolean {
  return path === ancestor || path.startsWith(`${ancestor}/`);
}

/** What is done with each safe entry of an archive, in archive order. */
interface EntrySink {
  directory(name: string): Promise<void>;
  /** `content` must be read to its end. */
  file(name: string, content: AsyncIterable<Buffer>, executable: boolean, size: number): Promise<void>;
  /** Called once every other entry was handled, for each symlink in archive order. */
  symlink(name: string, linkname: string): Promise<void>;
  /** Called when the archive was read to its end (pending writes are awaited here). */
  flush(): Promise<void>;
}

/**
 * Reads the archive at `archive` entry by entry, refusing unsafe entries, and hands each safe one to `sink`.
 *
 * @throws UnsafeArchiveError naming the first refused entry, or when the file is not a readable tar.gz.
 */
async function walkArchive(archive: string, sink: EntrySink): Promise<void> {
  const links: Array<{ name: string; linkname: string }> = [];
  const unpack = tarExtract();
  unpack.on('entry', (header, stream, next) => {
    const done = (error?: unknown) => {
      if (error !== undefined) {
        stream.resume();
        next(error as Error);
      } else next();
    };
    void (async () => {
      const name = safeName(header.name);
      const under = links.find((link) => isUnder(name, link.name));
      if (under !== undefined) {
        throw new UnsafeArchiveError(`entry ${name} is under the symlink ${under.name}`);
      }
      switch (header.type) {
        case 'directory':
          stream.resume();
          await sink.directory(name);
          return;
        case 'file':
        case 'contiguous-file':
          await sink.file(
            name,
            stream as AsyncIterable<Buffer>,
            ((header.mode ?? 0o644) & 0o111) !== 0,
            header.size ?? 0,
          );
          return;
        case 'symlink': {
          const linkname = header.linkname ?? '';
          const resolved = posix.normalize(posix.join(posix.dirname(name), linkname));
          if (isAbsolute(linkname) || resolved === '..' || resolved.startsWith('../')) {
            throw new UnsafeArchiveError(`symlink ${name} points out of the workspace (${linkname})`);
          }
          links.push({ name, linkname });
          stream.resume();
          return;
        }
        default:
          throw new UnsafeArchiveError(`entry ${name} is a ${header.type}, which a workspace cannot hold`);
      }
    })().then(() => done(), done);
  });
  try {
    await pipeline(createReadStream(archive), createGunzip(), unpack);
  } catch (error) {
    await sink.flush().catch(() => undefined);
    if (error instanceof UnsafeArchiveError || (error as NodeJS.ErrnoException).syscall !== undefined) {
      throw error;
    }
    throw new UnsafeArchiveError(`the archive is not a readable tar.gz: ${(error as Error).message}`);
  }
  await sink.flush();
  for (const link of links) await sink.symlink(link.name, link.linkname);
}

/**
 * Checks every entry of the archive at `archive` as {@link extractWorkspace} would, writing nothing, and
 * returns its index.
 *
 * @throws UnsafeArchiveError naming the first refused entry.
 */
export async function checkWorkspaceArchive(archive: string): Promise<WorkspaceIndex> {
  const index: WorkspaceIndex = { version: 1, fileCount: 0, executables: [], links: [] };
  const names = new Set<string>();
  const once = (name: string) => {
    if (names.has(name)) throw new UnsafeArchiveError(`entry ${name} appears twice`);
    names.add(name);
  };
  await walkArchive(archive, {
    directory: async () => undefined,
    file: async (name, content, executable) => {
      once(name);
      for await (const chunk of content) void chunk;
      index.fileCount++;
      if (executable) index.executables.push(name);
    },
    symlink: async (name) => {
      once(name);
      index.links.push(name);
    },
    flush: async () => undefined,
  });
  return index;
}

/**
 * Unpacks the archive at `archive` into `target`, which must not exist yet (it is created 0700).
 *
 * @throws UnsafeArchiveError naming the first refused entry; `target` may then hold part of the archive.
 */
export async function extractWorkspace(archive: string, target: string): Promise<Extracted> {
  await mkdir(target, { mode: 0o700 });
  // Directories made so far (relative names; '' is the target): each is made once, not per file.
  const made = new Set<string>(['']);
  const makeDir = async (name: string) => {
    if (made.has(name)) return;
    await mkdir(join(target, ...name.split('/')), { recursive: true, mode: 0o755 });
    for (let at = name; at !== '.' && at !== ''; at = posix.dirname(at)) made.add(at);
  };
  // File writes run while the next entries are read, a bounded number at a time (one file's bytes each).
  const writing = new Set<Promise<void>>();
  let failed: unknown;
  let fileCount = 0;
  await walkArchive(archive, {
    directory: makeDir,
    file: async (name, content, executable, size) => {
      if (failed !== undefined) throw failed;
      await makeDir(posix.dirname(name));
      // `wx`: never through an existing file or link (a duplicate entry is refused). The mode is masked by
      // the server's umask: the copy is private to its user, who runs the job.
      const path = join(target, ...name.split('/'));
      const mode = executable ? 0o755 : 0o644;
      fileCount++;
      if (size > STREAMED_FILE_BYTES) {
        await pipeline(content, createWriteStream(path, { flags: 'wx', mode }));
        return;
      }
      const chunks: Buffer[] = [];
      for await (const chunk of content) chunks.push(chunk);
      const write = writeFile(path, Buffer.concat(chunks), { flag: 'wx', mode })
        .catch((error: unknown) => {
          failed ??= error;
        })
        .finally(() => writing.delete(write));
      writing.add(write);
      if (writing.size >= PARALLEL_WRITES) await Promise.race(writing);
    },
    symlink: async (name, linkname) => {
      const path = join(target, ...name.split('/'));
      if (relative(target, path).startsWith(`..${sep}`)) {
        throw new UnsafeArchiveError(`symlink ${name} is outside`);
      }
      await makeDir(posix.dirname(name));
      await symlink(linkname, path);
    },
    flush: async () => {
      await Promise.all(writing);
      if (failed !== undefined) throw failed;
    },
  });
  return { fileCount };
}
