/**
 * Lists what a workspace archive holds: a depth-first walk of the tree in byte order of names, applying
 * {@link WorkspaceRules}, never following a symlink, and refusing one that points out of the tree.
 *
 * @module
 */
import { type BigIntStats, lstatSync } from 'node:fs';
import { readdir, readlink, realpath, stat } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { ignoreHint, WorkspaceError } from './errors.js';
import { type DirectoryRules, IGNORE_FILES, isVirtualEnvListing, WorkspaceRules } from './ignore-rules.js';

/** What the cache needs to recognise an unchanged file without reading it. */
export interface FileIdentity {
  readonly dev: string;
  readonly ino: string;
  readonly size: number;
  readonly mtimeNs: string;
  readonly ctimeNs: string;
}

/** One entry of the archive, in archive order. */
export interface WorkspaceEntry {
  /** Relative to the workspace root, `/`-separated, no trailing `/`. */
  readonly path: string;
  readonly type: 'file' | 'directory' | 'symlink';
  /** The normalized mode stored: 0644 or 0755 (by the owner-or-anyone executable bit) for files, 0755 for directories, 0777 for symlinks. */
  readonly mode: number;
  /** Bytes of a file's content; 0 for directories and symlinks. */
  readonly size: number;
  /** A symlink's target, relative to the symlink's directory and inside the tree. */
  readonly linkname?: string;
  /** The file's identity on disk, for files only. */
  readonly identity?: FileIdentity;
}

/** A regular file's entry. */
export type FileEntry = WorkspaceEntry & { readonly type: 'file'; readonly identity: FileIdentity };

/** Whether `entry` is a regular file. */
export function isFile(entry: WorkspaceEntry): entry is FileEntry {
  return entry.type === 'file';
}

/** An entry neither packed nor refused: sockets, FIFOs and devices, which have no content to ship. */
export interface SkippedEntry {
  readonly path: string;
  readonly kind: 'socket' | 'fifo' | 'device';
}

/** The walk's result. */
export interface WalkResult {
  /** The absolute, resolved workspace root. */
  readonly root: string;
  readonly entries: readonly WorkspaceEntry[];
  readonly skipped: readonly SkippedEntry[];
}

/** Sorts names by their UTF-8 bytes, the same on every machine and locale. */
function sortByBytes(names: readonly string[]): string[] {
  return names
    .map((name) => ({ name, bytes: Buffer.from(name) }))
    .sort((a, b) => Buffer.compare(a.bytes, b.bytes))
    .map(({ name }) => name);
}

function errnoCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/** The workspace root, resolved; a clear error when it is missing or not a directory. */
async function resolveRoot(dir: string): Promise<{ root: string; realRoot: string }> {
  const root = resolve(dir);
  try {
    const info = await stat(root);
    if (!info.isDirectory()) {
      throw new WorkspaceError(
        'not-a-directory',
        `workspace ${dir} is not a directory`,
        'pass the directory that holds your code with --workspace, or --workspace "" for none',
      );
    }
    return { root, realRoot: await realpath(root) };
  } catch (error) {
    if (error instanceof WorkspaceError) throw error;
    if (errnoCode(error) === 'ENOENT' || errnoCode(error) === 'ENOTDIR') {
      throw new WorkspaceError(
        'missing',
        `workspace ${dir} does not exist`,
        'pass the directory that holds your code with --workspace, or --workspace "" for none',
        undefined,
        { cause: error },
      );
    }
    throw new WorkspaceError(
      'unreadable',
      `workspace ${dir} cannot be read: ${String(error)}`,
      'check its permissions',
      undefined,
      {
        cause: error,
      },
    );
  }
}

/** Lists a directory's names in byte order; an unreadable directory is a clear error naming it. */
async function listDirectory(abs: string, rel: string): Promise<string[]> {
  try {
    return sortByBytes(await readdir(abs));
  } catch (error) {
    throw new WorkspaceError(
      'unreadable',
      `cannot read the directory ${rel === '' ? '.' : rel} of the workspace (${errnoCode(error) ?? String(error)})`,
      ignoreHint(rel),
      rel,
      { cause: error },
    );
  }
}

/**
 * A symlink's target as stored: relative to the link's directory. A target outside the tree (absolute or
 * relative, resolved without touching the file system) is refused: following it would ship files from
 * elsewhere, and keeping it would make the job depend on paths of this machine.
 */
function linkTarget(abs: string, rel: string, target: string, roots: readonly string[]): string {
  const from = dirname(abs);
  const resolved = isAbsolute(target) ? resolve(target) : resolve(from, target);
  const base = roots.find((root) => resolved === root || resolved.startsWith(`${root}${sep}`));
  if (base !== undefined) {
    const stored = relative(from, join(roots[0] as string, relative(base, resolved)));
    return stored === '' ? '.' : stored.split(sep).join('/');
  }
  throw new WorkspaceError(
    'symlink-outside',
    `symlink ${rel} points outside the workspace (to ${target}); it is not followed or packed`,
    `copy what it points to into the workspace, or add the line \`${rel}\` to .torchxignore`,
    rel,
  );
}

/**
 * `lstat` of an entry, or undefined when it was removed since the listing. Synchronous on purpose: metadata
 * the kernel has cached costs microseconds, and a trip through libuv's thread pool per entry made the walk
 * of a 5,000-file tree (the whole cost of an unchanged re-run) three times slower.
 */
function statEntry(abs: string, rel: string): BigIntStats | undefined {
  try {
    return lstatSync(abs, { bigint: true });
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return undefined;
    throw new WorkspaceError('unreadable', `cannot stat ${rel} in the workspace`, ignoreHint(rel), rel, {
      cause: error,
    });
  }
}

function identityOf(info: BigIntStats): FileIdentity {
  return {
    dev: info.dev.toString(),
    ino: info.ino.toString(),
    size: Number(info.size),
    mtimeNs: info.mtimeNs.toString(),
    ctimeNs: info.ctimeNs.toString(),
  };
}

/**
 * The workspace-relative path of `path` when it exists inside the tree (after symlinks), else undefined.
 */
async function pathInside(realRoot: string, path: string | undefined): Promise<string | undefined> {
  if (path === undefined) return undefined;
  const real = await realpath(path).catch(() => undefined);
  if (real === undefined) return undefined;
  const rel = relative(realRoot, real);
  if (rel === '' || rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return undefined;
  return rel.split(sep).join('/');
}

/**
 * Walks the workspace at `dir`: the entries to pack, in archive order, and the special files skipped.
 * `leaveOut` (the packer's own cache directory) is not entered when it is inside the tree: an archive
 * never holds earlier archives.
 *
 * @throws {@link WorkspaceError} when `dir` is missing or not a directory, a directory cannot be read, or a
 *   symlink points out of the tree.
 */
export async function walkWorkspace(dir: string, leaveOut?: string): Promise<WalkResult> {
  const { root, realRoot } = await resolveRoot(dir);
  const roots = root === realRoot ? [root] : [root, realRoot];
  const leftOut = await pathInside(realRoot, leaveOut);
  const rules = await WorkspaceRules.load(root);
  const entries: WorkspaceEntry[] = [];
  const skipped: SkippedEntry[] = [];

  const visit = async (abs: string, rel: string, names: readonly string[], dirRules: DirectoryRules) => {
    for (const name of names) {
      const childAbs = join(abs, name);
      const childRel = rel === '' ? name : `${rel}/${name}`;
      if (childRel === leftOut) continue;
      const info = statEntry(childAbs, childRel);
      if (info === undefined) continue; // removed since the listing
      const verdict = rules.decide(childRel, name, info.isDirectory(), dirRules);
      if (verdict.excluded) continue;
      if (info.isDirectory()) {
        const childNames = await listDirectory(childAbs, childRel);
        if (isVirtualEnvListing(childNames)) continue;
        entries.push({ path: childRel, type: 'directory', mode: 0o755, size: 0 });
        const childRules = childNames.includes(IGNORE_FILES.git)
          ? await rules.enter(childAbs, childRel, verdict.children)
          : verdict.children;
        await visit(childAbs, childRel, childNames, childRules);
      } else if (info.isFile()) {
        const executable = (Number(info.mode) & 0o111) !== 0;
        entries.push({
          path: childRel,
          type: 'file',
          mode: executable ? 0o755 : 0o644,
          size: Number(info.size),
          identity: identityOf(info),
        });
      } else if (info.isSymbolicLink()) {
        const target = await readlink(childAbs);
        entries.push({
          path: childRel,
          type: 'symlink',
          mode: 0o777,
          size: 0,
          linkname: linkTarget(childAbs, childRel, target, roots),
        });
      } else {
        skipped.push({
          path: childRel,
          kind: info.isSocket() ? 'socket' : info.isFIFO() ? 'fifo' : 'device',
        });
      }
    }
  };

  await visit(root, '', await listDirectory(root, ''), rules.root);
  return { root, entries, skipped };
}
