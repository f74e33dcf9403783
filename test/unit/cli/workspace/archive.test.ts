/**
 * The workspace archive: the same tree gives the same bytes, entries carry fixed times, owners and
 * normalized modes, the system `tar` unpacks it into the same tree, and bad workspaces are refused with an
 * error naming what is wrong.
 */
import { spawnSync } from 'node:child_process';
import { rmSync, symlinkSync } from 'node:fs';
import { chmod, lstat, readdir, readFile, readlink, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { LARGEST_COUNT, packWorkspace } from '../../../../lib/cli/workspace/archive.js';
import { WorkspaceError } from '../../../../lib/cli/workspace/errors.js';
import type { PackProgress } from '../../../../lib/cli/workspace/progress.js';
import { ARCHIVE_MTIME } from '../../../../lib/cli/workspace/tar-writer.js';
import { ESM_REQUIRE_BANNER } from '../../../../scripts/cli-bundle-options.js';
import { archiveNames, readArchive, type TreeNode, tempDir, treeDir, writeTree } from './tree.js';

const TREE: Record<string, TreeNode> = {
  'train.py': 'print("train")\n',
  'run.sh': { content: '#!/bin/sh\necho run\n', mode: 0o755 },
  'pkg/__init__.py': '',
  'pkg/model.py': 'class Model: ...\n',
  'configs/': '',
  'latest.py': { symlink: 'pkg/model.py' },
};

/** Packs `root` into a fresh output directory. */
async function pack(root: string, options: Parameters<typeof packWorkspace>[1] = {}) {
  return packWorkspace(root, { outDir: await tempDir('ws-out-'), ...options });
}

async function expectWorkspaceError(promise: Promise<unknown>): Promise<WorkspaceError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(WorkspaceError);
  return error as WorkspaceError;
}

describe('packWorkspace: reproducible bytes', () => {
  it('gives the same bytes and SHA-256 when the same tree is packed twice', async () => {
    const root = await treeDir(TREE);
    const first = await pack(root);
    const second = await pack(root);
    expect(second.sha256).toBe(first.sha256);
    expect(await readFile(second.path)).toEqual(await readFile(first.path));
    expect(first.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(first.path.endsWith(`${first.sha256}.tar.gz`)).toBe(true);
  });

  it('gives the same bytes for a copy of the tree with other mtimes, permissions and creation order', async () => {
    const original = await treeDir(TREE);
    const reversed = Object.fromEntries(Object.entries(TREE).reverse());
    const copy = await treeDir(reversed);
    await utimes(join(copy, 'train.py'), new Date('2021-05-06T07:08:09Z'), new Date('2021-05-06T07:08:09Z'));
    await utimes(join(copy, 'pkg'), new Date('2019-01-01T00:00:00Z'), new Date('2019-01-01T00:00:00Z'));
    await chmod(join(copy, 'train.py'), 0o600);
    await chmod(join(copy, 'run.sh'), 0o700);
    await chmod(join(copy, 'pkg'), 0o700);
    const a = await pack(original);
    const b = await pack(copy);
    expect(b.sha256).toBe(a.sha256);
    expect(b.tarSha256).toBe(a.tarSha256);
  });

  it('changes the SHA-256 when a byte of a file or its executable bit changes', async () => {
    const root = await treeDir(TREE);
    const before = await pack(root);
    await writeFile(join(root, 'train.py'), 'print("trainX")\n');
    const edited = await pack(root);
    await chmod(join(root, 'train.py'), 0o755);
    const executable = await pack(root);
    expect(new Set([before.sha256, edited.sha256, executable.sha256]).size).toBe(3);
  });

  it('keeps the uncompressed tar hash when only the gzip level, and so the compressed bytes, change', async () => {
    const root = await treeDir(TREE);
    const fast = await pack(root, { gzipLevel: 1 });
    const small = await pack(root, { gzipLevel: 9 });
    expect(fast.sha256).not.toBe(small.sha256);
    expect(fast.tarSha256).toBe(small.tarSha256);
  });

  it('stores fixed times, owner 0 with empty names, and modes 0644 / 0755 by the executable bit', async () => {
    const root = await treeDir(TREE);
    await chmod(join(root, 'train.py'), 0o664);
    const entries = await readArchive((await pack(root)).path);
    const byName = Object.fromEntries(entries.map((entry) => [entry.name, entry]));
    for (const entry of entries) {
      expect(entry).toMatchObject({ uid: 0, gid: 0, uname: '', gname: '', mtime: ARCHIVE_MTIME.getTime() });
    }
    expect(byName['train.py']?.mode).toBe(0o644);
    expect(byName['run.sh']?.mode).toBe(0o755);
    expect(byName['pkg/']).toMatchObject({ type: 'directory', mode: 0o755 });
    expect(byName['latest.py']).toMatchObject({ type: 'symlink', linkname: 'pkg/model.py' });
  });

  it('orders entries depth-first by the bytes of their names', async () => {
    const root = await treeDir({ b: '', 'a/x': '', 'a.txt': '', B: '', 'a/Z': '' });
    expect(await archiveNames((await pack(root)).path)).toEqual(['B', 'a/', 'a/Z', 'a/x', 'a.txt', 'b']);
  });

  it('writes a gzip header with no file name, no time and the Unix OS byte', async () => {
    const bytes = await readFile((await pack(await treeDir(TREE))).path);
    expect([...bytes.subarray(0, 4)]).toEqual([0x1f, 0x8b, 8, 0]); // magic, deflate, no FNAME/FCOMMENT/FEXTRA
    expect(bytes.readUInt32LE(4)).toBe(0); // MTIME
    expect(bytes[9]).toBe(3); // OS: Unix, whatever zlib was built for
  });

  it('reports the archive size, the content bytes, the file count and the largest files first', async () => {
    const files = Object.fromEntries(
      Array.from({ length: 12 }, (_, i) => [`f${i}.bin`, 'x'.repeat(100 + i)]),
    );
    const result = await pack(await treeDir(files));
    expect(result.size).toBe((await stat(result.path)).size);
    expect(result.fileCount).toBe(12);
    expect(result.uncompressedSize).toBe(Object.values(files).reduce((sum, text) => sum + text.length, 0));
    expect(result.largest).toHaveLength(LARGEST_COUNT);
    expect(result.largest[0]).toEqual({ path: 'f11.bin', size: 111 });
    expect(result.largest.at(-1)).toEqual({ path: 'f2.bin', size: 102 });
  });
});

describe('packWorkspace: unpacked by the system tar', () => {
  async function unpack(archive: string): Promise<string> {
    const dest = await tempDir('ws-unpacked-');
    const result = spawnSync('tar', ['-xzf', archive, '-C', dest], { encoding: 'utf8' });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    return dest;
  }

  it('reproduces the files, their executable bits, the symlinks and empty directories', async () => {
    const dest = await unpack((await pack(await treeDir(TREE))).path);
    expect((await readdir(dest)).sort()).toEqual(['configs', 'latest.py', 'pkg', 'run.sh', 'train.py']);
    expect(await readFile(join(dest, 'pkg/model.py'), 'utf8')).toBe('class Model: ...\n');
    expect((await stat(join(dest, 'run.sh'))).mode & 0o111).not.toBe(0);
    expect((await stat(join(dest, 'train.py'))).mode & 0o111).toBe(0);
    expect((await lstat(join(dest, 'latest.py'))).isSymbolicLink()).toBe(true);
    expect(await readlink(join(dest, 'latest.py'))).toBe('pkg/model.py');
    expect(await readdir(join(dest, 'configs'))).toEqual([]);
  });

  it('unpacks paths longer than 100 bytes and non-ASCII names (pax records)', async () => {
    const long = `${'d'.repeat(60)}/${'e'.repeat(60)}/${'f'.repeat(120)}.py`;
    const dest = await unpack(
      (await pack(await treeDir({ [long]: 'long', 'données/été.txt': 'utf8' }))).path,
    );
    expect(await readFile(join(dest, long), 'utf8')).toBe('long');
    expect(await readFile(join(dest, 'données/été.txt'), 'utf8')).toBe('utf8');
  });

  it('packs an empty workspace into an archive that unpacks to nothing', async () => {
    const result = await pack(await tempDir());
    expect(result).toMatchObject({ fileCount: 0, uncompressedSize: 0, largest: [] });
    expect(await readdir(await unpack(result.path))).toEqual([]);
  });
});

describe('packWorkspace: special files', () => {
  it('leaves out a FIFO without opening it, and reports it as skipped', async () => {
    const root = await treeDir({ 'train.py': '' });
    expect(spawnSync('mkfifo', [join(root, 'pipe')]).status).toBe(0);
    const result = await pack(root);
    expect(result.skipped).toEqual([{ path: 'pipe', kind: 'fifo' }]);
    expect(await archiveNames(result.path)).toEqual(['train.py']);
  });
});

describe('packWorkspace: refusals', () => {
  it('refuses a missing directory, naming it', async () => {
    const missing = join(await tempDir(), 'nope');
    const error = await expectWorkspaceError(pack(missing));
    expect(error.problem).toBe('missing');
    expect(error.message).toContain(missing);
  });

  it('refuses a path that is a file, not a directory', async () => {
    const root = await treeDir({ 'train.py': '' });
    const error = await expectWorkspaceError(pack(join(root, 'train.py')));
    expect(error.problem).toBe('not-a-directory');
  });

  it('refuses a workspace over maxBytes, listing the largest files and directories and how to ignore them', async () => {
    const root = await treeDir({
      'data/big.bin': 'x'.repeat(3000),
      'data/other.bin': 'x'.repeat(2000),
      'ckpt.pt': 'x'.repeat(1500),
      'train.py': 'x',
    });
    const error = await expectWorkspaceError(pack(root, { maxBytes: 4000 }));
    expect(error.problem).toBe('too-large');
    expect(error.message).toMatch(/6\.\d KiB of files, over the 3\.9 KiB limit/);
    const listed = error.message.split('\n').slice(1);
    expect(listed[0]).toMatch(/\bdata\/$/);
    expect(listed[1]).toMatch(/\bdata\/big\.bin$/);
    expect(listed.join('\n')).toContain('ckpt.pt');
    expect(error.hint).toContain('`data` to .torchxignore');
  });

  it('refuses a file swapped for a symlink while it is packed, without following it or leaving a partial archive', async () => {
    const root = await treeDir({ 'a.py': 'a', 'z.py': 'z' });
    const outDir = await tempDir('ws-out-');
    let swapped = false;
    const error = await expectWorkspaceError(
      packWorkspace(root, {
        outDir,
        progressIntervalMs: 0,
        // Called after a.py is packed and before z.py is opened.
        onProgress: () => {
          if (swapped) return;
          swapped = true;
          rmSync(join(root, 'z.py'));
          symlinkSync('/etc/hostname', join(root, 'z.py'));
        },
      }),
    );
    expect(error).toMatchObject({ problem: 'changed', path: 'z.py' });
    expect(await readdir(outDir)).toEqual([]);
  });

  it('refuses an unreadable file and an unreadable directory, naming each', async () => {
    const root = await treeDir({ 'ok.py': '', 'secret.key': 'k', 'locked/inner.py': '' });
    await chmod(join(root, 'secret.key'), 0o000);
    const outcomes = await packAsAnotherUser(root);
    expect(outcomes.file).toMatchObject({ problem: 'unreadable', path: 'secret.key' });
    expect(outcomes.file.message).toContain('secret.key');
    expect(outcomes.file.hint).toContain('.torchxignore');
    await chmod(join(root, 'secret.key'), 0o644);
    await chmod(join(root, 'locked'), 0o000);
    const again = await packAsAnotherUser(root);
    expect(again.file).toMatchObject({ problem: 'unreadable', path: 'locked' });
  });
});

/**
 * Packs `root` as a user the permission bits apply to: this process when it is not root, otherwise a child
 * process running as `nobody` (root reads any file whatever its mode).
 */
async function packAsAnotherUser(
  root: string,
): Promise<{ file: { problem: string; path?: string; message: string; hint?: string } }> {
  if (process.getuid?.() !== 0) {
    const error = await expectWorkspaceError(pack(root));
    return { file: { problem: error.problem, path: error.path, message: error.message, hint: error.hint } };
  }
  const { chmod: chmodAll } = await import('node:fs/promises');
  const out = await tempDir('ws-nobody-');
  await chmodAll(out, 0o777);
  await chmodAll(root, 0o755);
  // The packer as one self-contained file in `out`, so `nobody` needs no access to this checkout (which may
  // sit in a directory only root can enter) and no TypeScript loader.
  const packer = join(out, 'packer.mjs');
  await build({
    entryPoints: [fileURLToPath(new URL('../../../../lib/cli/workspace/archive.ts', import.meta.url))],
    outfile: packer,
    bundle: true,
    platform: 'node',
    format: 'esm',
    // tar-stream's CommonJS requires Node's built-ins.
    banner: { js: ESM_REQUIRE_BANNER },
    logLevel: 'silent',
  });
  const script = join(out, 'pack.mjs');
  await writeFile(
    script,
    `const { packWorkspace } = await import('./packer.mjs');
try { await packWorkspace(${JSON.stringify(root)}, { outDir: ${JSON.stringify(out)} }); console.log('{}'); }
catch (e) { console.log(JSON.stringify({ problem: e.problem, path: e.path, message: e.message, hint: e.hint })); }`,
  );
  await chmodAll(packer, 0o644);
  await chmodAll(script, 0o644);
  const result = spawnSync(process.execPath, [script], {
    uid: 65534,
    gid: 65534,
    encoding: 'utf8',
    cwd: out,
    env: { ...process.env, HOME: out, TMPDIR: out },
  });
  expect(result.stderr).toBe('');
  return { file: JSON.parse(result.stdout.trim()) };
}

describe('packWorkspace: progress', () => {
  const record = () => {
    const reports: PackProgress[] = [];
    return { reports, onProgress: (progress: PackProgress) => reports.push(progress), progressIntervalMs: 0 };
  };

  it('reports packing file by file, ending with every file and byte counted', async () => {
    const { reports, ...options } = record();
    await pack(await treeDir(TREE), options);
    expect(reports.map((report) => report.files)).toEqual([1, 2, 3, 4]);
    expect(reports.at(-1)).toEqual({ phase: 'packing', files: 4, bytes: 51, totalFiles: 4, totalBytes: 51 });
  });

  it('with a cache, hashes only the files it does not know, then packs them all', async () => {
    const root = await treeDir(TREE);
    const past = new Date(Date.now() - 60_000);
    for (const path of ['run.sh', 'pkg/__init__.py', 'pkg/model.py'])
      await utimes(join(root, path), past, past);
    const cacheDir = join(await tempDir(), 'cache');
    await packWorkspace(root, { cacheDir });
    await writeFile(join(root, 'train.py'), 'print("again")\n');
    const { reports, ...options } = record();
    await packWorkspace(root, { cacheDir, ...options });
    expect(reports.filter((report) => report.phase === 'hashing')).toEqual([
      { phase: 'hashing', files: 1, bytes: 15, totalFiles: 1, totalBytes: 15 },
    ]);
    expect(reports.at(-1)).toEqual({ phase: 'packing', files: 4, bytes: 51, totalFiles: 4, totalBytes: 51 });
  });
});

describe('packWorkspace: the cache', () => {
  /** A tree whose files were last modified a minute ago, so their cached hashes are trusted. */
  async function settledTree(): Promise<string> {
    const root = await treeDir(TREE);
    const past = new Date(Date.now() - 60_000);
    for (const path of ['train.py', 'run.sh', 'pkg/__init__.py', 'pkg/model.py'])
      await utimes(join(root, path), past, past);
    return root;
  }

  it('returns the cached archive for an unchanged tree, without packing it again', async () => {
    const root = await settledTree();
    const cacheDir = join(await tempDir(), 'cache');
    const first = await packWorkspace(root, { cacheDir });
    const reports: PackProgress[] = [];
    const second = await packWorkspace(root, {
      cacheDir,
      onProgress: (p) => reports.push(p),
      progressIntervalMs: 0,
    });
    expect(first.cached).toBe(false);
    expect(second).toMatchObject({ cached: true, sha256: first.sha256, path: first.path, fileCount: 4 });
    expect(reports).toEqual([]);
    expect((await stat(join(cacheDir, 'archives'))).mode & 0o777).toBe(0o700);
  });

  it('leaves its own cache out of a workspace that holds it (a run from the home directory), so no archive packs another', async () => {
    const root = await settledTree();
    const cacheDir = join(root, '.cache', 'txs', 'workspaces');
    await packWorkspace(root, { cacheDir });
    // The cache now exists inside the tree: its parents are packed (empty), its archives are not.
    const second = await packWorkspace(root, { cacheDir });
    const third = await packWorkspace(root, { cacheDir });
    expect(third.sha256).toBe(second.sha256);
    const names = await archiveNames(third.path);
    expect(names).toContain('.cache/txs/');
    expect(names.filter((name) => name.includes('workspaces'))).toEqual([]);
  });

  it('packs again when a file changes even with its size and mtime put back', async () => {
    const root = await settledTree();
    const cacheDir = join(await tempDir(), 'cache');
    const first = await packWorkspace(root, { cacheDir });
    const { mtime } = await stat(join(root, 'train.py'));
    await writeFile(join(root, 'train.py'), 'print("TRAIN")\n');
    await utimes(join(root, 'train.py'), mtime, mtime);
    const second = await packWorkspace(root, { cacheDir });
    expect(second.cached).toBe(false);
    expect(second.sha256).not.toBe(first.sha256);
    const entries = await readArchive(second.path);
    expect(entries.find((entry) => entry.name === 'train.py')?.content).toBe('print("TRAIN")\n');
  });

  it('gives the same archive with and without a cache', async () => {
    const root = await settledTree();
    const cached = await packWorkspace(root, { cacheDir: join(await tempDir(), 'cache') });
    expect((await pack(root)).sha256).toBe(cached.sha256);
  });

  it('refuses a cache path that is a symlink, creating nothing where it points', async () => {
    const elsewhere = await tempDir();
    const cacheDir = join(await tempDir(), 'cache');
    symlinkSync(elsewhere, cacheDir);
    const error = await expectWorkspaceError(packWorkspace(await treeDir(TREE), { cacheDir }));
    expect(error.problem).toBe('cache');
    expect(await readdir(elsewhere)).toEqual([]);
  });

  it('refuses a cache directory that other users can write', async () => {
    const cacheDir = await tempDir();
    await chmod(cacheDir, 0o777);
    const error = await expectWorkspaceError(packWorkspace(await treeDir(TREE), { cacheDir }));
    expect(error.problem).toBe('cache');
    expect(error.message).toContain(cacheDir);
  });
});

describe('packWorkspace: the tree it packs', () => {
  it('leaves out version control, caches and virtual environments whatever the ignore files say', async () => {
    const root = await treeDir({
      'train.py': '',
      '.git/HEAD': 'ref',
      'sub/.git': 'gitdir: elsewhere',
      'pkg/__pycache__/m.cpython-312.pyc': '',
      '.pytest_cache/v': '',
      '.mypy_cache/x': '',
      'node_modules/left-pad/index.js': '',
      '.venv/bin/python': '',
      'venv/lib/x': '',
      'myenv/pyvenv.cfg': 'home = /usr',
      'myenv/lib/site.py': '',
      'conda/conda-meta/history': '',
    });
    await writeTree(root, { '.torchxignore': '!.git\n!node_modules\n' });
    expect(await archiveNames((await pack(root)).path)).toEqual([
      '.torchxignore',
      'pkg/',
      'sub/',
      'train.py',
    ]);
  });
});
