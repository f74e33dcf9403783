/**
 * Helpers for the workspace tests: build a directory tree from a literal description, and read an archive
 * back entry by entry (with the tar-stream parser, independent of how it was written).
 */
import { chmod, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createGunzip } from 'node:zlib';
import { extract } from 'tar-stream';
import { afterEach } from 'vitest';

/** A file's content, a file with a mode, a symlink, or an empty directory (a path ending in `/`). */
export type TreeNode = string | { content: string; mode: number } | { symlink: string };

/** Writes `tree` under `root`: keys are `/`-separated paths; a key ending in `/` is an empty directory. */
export async function writeTree(root: string, tree: Record<string, TreeNode>): Promise<void> {
  for (const [path, node] of Object.entries(tree)) {
    const abs = join(root, path);
    if (path.endsWith('/')) {
      await mkdir(abs, { recursive: true });
      continue;
    }
    await mkdir(dirname(abs), { recursive: true });
    if (typeof node === 'string') {
      await writeFile(abs, node);
    } else if ('symlink' in node) {
      await symlink(node.symlink, abs);
    } else {
      await writeFile(abs, node.content);
      await chmod(abs, node.mode);
    }
  }
}

const made: string[] = [];
afterEach(async () => {
  for (const dir of made.splice(0)) await rm(dir, { recursive: true, force: true });
});

/** A fresh temporary directory, removed after the test. */
export async function tempDir(prefix = 'ws-test-'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

/** A fresh temporary directory holding `tree`. */
export async function treeDir(tree: Record<string, TreeNode>): Promise<string> {
  const root = await tempDir();
  await writeTree(root, tree);
  return root;
}

/** One entry of an archive as read back. */
export interface ReadEntry {
  name: string;
  type: string;
  mode: number;
  uid: number;
  gid: number;
  uname: string;
  gname: string;
  mtime: number;
  linkname: string | null;
  content: string;
}

/** Reads a `.tar.gz` back, in archive order. */
export async function readArchive(path: string): Promise<ReadEntry[]> {
  const parser = extract();
  const gunzip = createGunzip();
  gunzip.pipe(parser as unknown as NodeJS.WritableStream);
  gunzip.end(await readFile(path));
  const entries: ReadEntry[] = [];
  for await (const entry of parser) {
    const chunks: Buffer[] = [];
    for await (const chunk of entry) chunks.push(chunk as Buffer);
    const { header } = entry;
    entries.push({
      name: header.name,
      type: header.type,
      mode: header.mode,
      uid: header.uid,
      gid: header.gid,
      uname: header.uname,
      gname: header.gname,
      mtime: header.mtime.getTime(),
      linkname: header.linkname ?? null,
      content: Buffer.concat(chunks).toString('utf8'),
    });
  }
  return entries;
}

/** The names in an archive. */
export async function archiveNames(path: string): Promise<string[]> {
  return (await readArchive(path)).map((entry) => entry.name);
}
