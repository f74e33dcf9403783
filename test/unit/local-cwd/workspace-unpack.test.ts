import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, readlink, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  checkWorkspaceArchive,
  extractWorkspace,
  STREAMED_FILE_BYTES,
  UnsafeArchiveError,
} from '../../../lib/schedulers/local-cwd/workspace-unpack.js';
import { type Entry, tarGzOf } from '../../helpers/workspace-archives.js';

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'txs-extract-'));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A tar.gz of `entries`, in order, written to a file. */
async function archiveOf(entries: Entry[]): Promise<string> {
  const path = join(dir, 'archive.tar.gz');
  await writeFile(path, await tarGzOf(entries));
  return path;
}

/** Archives neither function accepts, with what the refusal says. */
const REFUSED: Array<[string, Entry[], RegExp]> = [
  ['an absolute name', [{ name: '/etc/evil', body: 'x' }], /absolute/],
  ['a name climbing out with ..', [{ name: 'a/../../evil', body: 'x' }], /climbs out/],
  ['a symlink pointing out of the tree', [{ name: 'up', type: 'symlink', linkname: '../..' }], /points out/],
  ['an absolute symlink', [{ name: 'etc', type: 'symlink', linkname: '/etc' }], /points out/],
  [
    'an entry under a symlink of the archive',
    [
      { name: 'here', type: 'symlink', linkname: 'sub' },
      { name: 'here/file', body: 'x' },
    ],
    /under the symlink here/,
  ],
  [
    'a hard link',
    [
      { name: 'a', body: 'x' },
      { name: 'b', type: 'link', linkname: 'a' },
    ],
    /a link/,
  ],
];

describe('extractWorkspace', () => {
  it('unpacks files, directories, executables and links inside the tree, counting the files', async () => {
    const archive = await archiveOf([
      { name: 'src', type: 'directory', mode: 0o755 },
      { name: 'src/train.py', body: 'print(1)\n' },
      { name: 'run.sh', body: 'echo hi\n', mode: 0o755 },
      { name: 'latest', type: 'symlink', linkname: 'src/train.py' },
    ]);
    const target = join(dir, 'out');
    expect(await extractWorkspace(archive, target)).toEqual({ fileCount: 2 });
    expect(await readFile(join(target, 'src/train.py'), 'utf8')).toBe('print(1)\n');
    expect((await stat(join(target, 'run.sh'))).mode & 0o777).toBe(0o755);
    expect(await readlink(join(target, 'latest'))).toBe('src/train.py');
  });

  it.each(REFUSED)('refuses %s', async (_what, entries, message) => {
    const archive = await archiveOf(entries);
    const failure = extractWorkspace(archive, join(dir, 'out'));
    await expect(failure).rejects.toThrow(UnsafeArchiveError);
    await expect(failure).rejects.toThrow(message);
    await expect(stat(join(dir, 'evil'))).rejects.toThrow();
  });

  it('refuses a file that is not a gzip-compressed tar', async () => {
    const path = join(dir, 'plain.txt');
    await writeFile(path, 'not an archive');
    await expect(extractWorkspace(path, join(dir, 'out'))).rejects.toThrow(/not a readable tar\.gz/);
  });

  it('streams a file larger than it holds in memory to disk, whole, beside small ones', async () => {
    const big = randomBytes(STREAMED_FILE_BYTES + 12345).toString('base64');
    const archive = await archiveOf([
      { name: 'small.txt', body: 'small' },
      { name: 'data/big.bin', body: big, mode: 0o755 },
      { name: 'after.txt', body: 'after' },
    ]);
    const target = join(dir, 'out');
    expect(await extractWorkspace(archive, target)).toEqual({ fileCount: 3 });
    expect(await readFile(join(target, 'data/big.bin'), 'utf8')).toBe(big);
    expect((await stat(join(target, 'data/big.bin'))).mode & 0o111).not.toBe(0);
    expect(await readFile(join(target, 'after.txt'), 'utf8')).toBe('after');
  });

  it('refuses a large file given twice instead of writing through the first', async () => {
    const big = 'x'.repeat(STREAMED_FILE_BYTES + 1);
    const archive = await archiveOf([
      { name: 'big.bin', body: big },
      { name: 'big.bin', body: big },
    ]);
    await expect(extractWorkspace(archive, join(dir, 'out'))).rejects.toThrow(/EEXIST/);
  });
});

describe('checkWorkspaceArchive', () => {
  it('indexes the files, the executables and the links, writing nothing', async () => {
    const archive = await archiveOf([
      { name: 'src', type: 'directory', mode: 0o755 },
      { name: 'src/train.py', body: 'print(1)\n' },
      { name: 'bin/run.sh', body: 'echo hi\n', mode: 0o755 },
      { name: 'latest', type: 'symlink', linkname: 'bin/run.sh' },
    ]);
    expect(await checkWorkspaceArchive(archive)).toEqual({
      version: 1,
      fileCount: 2,
      executables: ['bin/run.sh'],
      links: ['latest'],
    });
    expect((await readdir(dir)).sort()).toEqual(['archive.tar.gz']);
  });

  it.each([
    ...REFUSED,
    [
      'a name given twice',
      [
        { name: 'a', body: 'x' },
        { name: './a', body: 'y' },
      ],
      /appears twice/,
    ],
  ] as Array<[string, Entry[], RegExp]>)(
    'refuses %s, as unpacking would',
    async (_what, entries, message) => {
      const failure = checkWorkspaceArchive(await archiveOf(entries));
      await expect(failure).rejects.toThrow(UnsafeArchiveError);
      await expect(failure).rejects.toThrow(message);
    },
  );

  it('refuses a file that is not a gzip-compressed tar', async () => {
    const path = join(dir, 'plain.txt');
    await writeFile(path, 'not an archive');
    await expect(checkWorkspaceArchive(path)).rejects.toThrow(/not a readable tar\.gz/);
  });
});
