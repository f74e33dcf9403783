/**
 * Unpacks a workspace archive (gzip-compressed tar) into a new directory, refusing anything that could write
 * outside it: absolute names, `..` segments, entries under a symlink of the archive, links whose target
 * leaves the directory, hard links and special files. Symlinks are created last, so no entry is written
 * through one.
 *
 * @module
 */
import { createReadStream } from 'node:fs';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { isAbsolute, join, posix, relative, sep } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { extract as tarExtract } from 'tar-stream';

/** File writes in flight at once while the archive is read. */
const PARALLEL_WRITES = 16;

/** What an unpacked archive held. */
export interface Extracted {
  /** Regular files written. */
  fileCount: number;
}

/** Thrown when an archive has an entry that cannot be unpacked safely (or is not a tar.gz at all). */
export class UnsafeArchiveError extends Error {}

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

/**
 * Unpacks the archive at `archive` into `target`, which must not exist yet (it is created 0700).
 *
 * @throws UnsafeArchiveError naming the first refused entry; `target` may then hold part of the archive.
 */
export async function extractWorkspace(archive: string, target: string): Promise<Extracted> {
  await mkdir(target, { mode: 0o700 });
  const links: Array<{ name: string; linkname: string }> = [];
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
  const unpack = tarExtract();
  unpack.on('entry', (header, stream, next) => {
    const done = (error?: unknown) => {
      if (error !== undefined) {
        stream.resume();
        next(error as Error);
      } else next();
    };
    void (async () => {
      if (failed !== undefined) throw failed;
      const name = safeName(header.name);
      const under = links.find((link) => isUnder(name, link.name));
      if (under !== undefined) {
        throw new UnsafeArchiveError(`entry ${name} is under the symlink ${under.name}`);
      }
      switch (header.type) {
        case 'directory':
          stream.resume();
          await makeDir(name);
          return;
        case 'file':
        case 'contiguous-file': {
          const chunks: Buffer[] = [];
          for await (const chunk of stream) chunks.push(chunk as Buffer);
          await makeDir(posix.dirname(name));
          // `wx`: never through an existing file or link (a duplicate entry is refused). The mode is masked
          // by the server's umask: the copy is private to its user, who runs the job.
          const mode = ((header.mode ?? 0o644) & 0o111) !== 0 ? 0o755 : 0o644;
          const write = writeFile(join(target, ...name.split('/')), Buffer.concat(chunks), {
            flag: 'wx',
            mode,
          })
            .catch((error: unknown) => {
              failed ??= error;
            })
            .finally(() => writing.delete(write));
          writing.add(write);
          fileCount++;
          if (writing.size >= PARALLEL_WRITES) await Promise.race(writing);
          return;
        }
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
    await Promise.all(writing);
    if (error instanceof UnsafeArchiveError) throw error;
    if (failed !== undefined && error === failed) throw error;
    throw new UnsafeArchiveError(`the archive is not a readable tar.gz: ${(error as Error).message}`);
  }
  await Promise.all(writing);
  if (failed !== undefined) throw failed;
  for (const link of links) {
    const path = join(target, ...link.name.split('/'));
    const rel = relative(target, path);
    if (rel.startsWith(`..${sep}`)) throw new UnsafeArchiveError(`symlink ${link.name} is outside`);
    await makeDir(posix.dirname(link.name));
    await symlink(link.linkname, path);
  }
  return { fileCount };
}
