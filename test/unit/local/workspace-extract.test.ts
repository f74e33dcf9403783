import { mkdtemp, readFile, readlink, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { pack } from 'tar-stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { extractWorkspace, UnsafeArchiveError } from '../../../lib/local/workspace-extract.js';

type Entry = {
  name: string;
  type?: 'file' | 'directory' | 'symlink' | 'link';
  body?: string;
  linkname?: string;
  mode?: number;
};

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'txs-extract-'));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A tar.gz of `entries`, in order, written to a file. */
async function archiveOf(entries: Entry[]): Promise<string> {
  const tar = pack();
  const chunks: Buffer[] = [];
  tar.on('data', (chunk) => chunks.push(chunk as Buffer));
  const ended = new Promise<void>((resolve) => tar.on('end', () => resolve()));
  for (const entry of entries) {
    const { body, ...header } = entry;
    tar.entry({ type: 'file', mode: 0o644, ...header }, body ?? '');
  }
  tar.finalize();
  await ended;
  const path = join(dir, 'archive.tar.gz');
  await writeFile(path, gzipSync(Buffer.concat(chunks)));
  return path;
}

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

  it.each([
    ['an absolute name', [{ name: '/etc/evil', body: 'x' }], /absolute/],
    ['a name climbing out with ..', [{ name: 'a/../../evil', body: 'x' }], /climbs out/],
    [
      'a symlink pointing out of the tree',
      [{ name: 'up', type: 'symlink', linkname: '../..' }],
      /points out/,
    ],
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
  ] as Array<[string, Entry[], RegExp]>)('refuses %s', async (_what, entries, message) => {
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
});
