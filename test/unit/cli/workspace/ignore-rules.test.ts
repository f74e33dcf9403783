/**
 * What a workspace archive leaves out: `.torchxignore` and `.dockerignore` read as TorchX reads them (the
 * expected lists below are what TorchX's own `walk_workspace` keeps for the same tree and lines), `.gitignore`
 * with git's syntax at every depth and above the workspace, and the names never packed.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TorchxIgnore } from '../../../../lib/cli/workspace/ignore-rules.js';
import { walkWorkspace } from '../../../../lib/cli/workspace/walk.js';
import { compileFnmatch } from '../../../../lib/specs/fnmatch.js';
import { type TreeNode, treeDir, writeTree } from './tree.js';

/** The files a walk keeps, sorted. */
async function keptFiles(root: string): Promise<string[]> {
  const { entries } = await walkWorkspace(root);
  return entries
    .filter((entry) => entry.type === 'file')
    .map((entry) => entry.path)
    .sort();
}

const SAMPLE: Record<string, TreeNode> = {
  'a.txt': 'a',
  'b.txt': 'b',
  'c.txt': 'c',
  'x.pyc': '1',
  'src/y.pyc': '1',
  'src/main.py': '1',
  'src/util.py': '1',
  'data/keep.txt': 'k',
  'data/big.bin': 'b',
  'sub1/x.py': 'x',
  'nested/data/n.txt': 'd',
  'nested/m.bin': 'm',
};
const ALL = Object.keys(SAMPLE).sort();

/** The sample tree with `lines` as its `file` (`.torchxignore` or `.dockerignore`); the files kept, without it. */
async function keptWith(file: string, lines: string): Promise<string[]> {
  const root = await treeDir({ ...SAMPLE, [file]: lines });
  return (await keptFiles(root)).filter((path) => path !== file);
}

const without = (...paths: string[]) => ALL.filter((path) => !paths.includes(path));

describe('.torchxignore, read as TorchX reads it', () => {
  it('matches fnmatch patterns against the root-relative path, so `*` crosses directories', async () => {
    expect(await keptWith('.torchxignore', '*.pyc\n')).toEqual(without('x.pyc', 'src/y.pyc'));
    expect(await keptWith('.torchxignore', '[ab]*.txt\n')).toEqual(without('a.txt', 'b.txt'));
    expect(await keptWith('.torchxignore', 'sub?/x.py\n')).toEqual(without('sub1/x.py'));
  });

  it('anchors a plain name at the root: `data` leaves out data/ but not nested/data/', async () => {
    expect(await keptWith('.torchxignore', 'data\n')).toEqual(without('data/keep.txt', 'data/big.bin'));
  });

  it('applies the last matching line, with `!` negating, and strips comments anywhere on a line', async () => {
    expect(await keptWith('.torchxignore', 'src/*.py  # sources\n!src/main.py\n')).toEqual(
      without('src/util.py'),
    );
    expect(await keptWith('.torchxignore', '!data\ndata/*.bin\n')).toEqual(without('data/big.bin'));
  });

  it('never enters an ignored directory, so a later negation cannot bring a file under it back', async () => {
    expect(await keptWith('.torchxignore', 'data\n!data/keep.txt\n')).toEqual(
      without('data/keep.txt', 'data/big.bin'),
    );
  });

  it('tests what is under a directory only against the lines after the last line that matched it', async () => {
    expect(await keptWith('.torchxignore', 'data/*.bin\n!data\n')).toEqual(ALL);
    expect(await keptWith('.torchxignore', '*\n!src\n!src/*\n')).toEqual([
      'src/main.py',
      'src/util.py',
      'src/y.pyc',
    ]);
  });

  it("accepts Docker's spellings TorchX would never match: a leading `/`, a trailing `/`, a leading `**/`", async () => {
    expect(await keptWith('.torchxignore', '/data\n')).toEqual(without('data/keep.txt', 'data/big.bin'));
    expect(await keptWith('.torchxignore', 'data/\n')).toEqual(without('data/keep.txt', 'data/big.bin'));
    expect(await keptWith('.torchxignore', '**/*.txt\n')).toEqual(
      without('a.txt', 'b.txt', 'c.txt', 'data/keep.txt', 'nested/data/n.txt'),
    );
  });

  it('packs the ignore file itself unless it ignores itself', async () => {
    const root = await treeDir({ 'train.py': '', '.torchxignore': '.torchxignore\n' });
    expect(await keptFiles(root)).toEqual(['train.py']);
  });

  it('reads only the root file: a .torchxignore in a subdirectory is an ordinary file', async () => {
    const root = await treeDir({ 'pkg/.torchxignore': '*\n', 'pkg/model.py': '' });
    expect(await keptFiles(root)).toEqual(['pkg/.torchxignore', 'pkg/model.py']);
  });
});

describe('.dockerignore', () => {
  it('is read like .torchxignore (TorchX applied it to the Docker workspace aws_batch used)', async () => {
    expect(await keptWith('.dockerignore', '*.pyc\ndata\n!data/keep.txt\n')).toEqual(
      without('x.pyc', 'src/y.pyc', 'data/keep.txt', 'data/big.bin'),
    );
  });

  it('adds to .torchxignore: a path either file ignores is left out', async () => {
    const root = await treeDir({ ...SAMPLE, '.torchxignore': '*.pyc\n', '.dockerignore': '*.bin\n' });
    expect((await keptFiles(root)).filter((path) => !path.startsWith('.'))).toEqual(
      without('x.pyc', 'src/y.pyc', 'data/big.bin', 'nested/m.bin'),
    );
  });
});

describe('.gitignore, with git syntax', () => {
  it('matches a slash-less pattern at any depth and a `dir/` pattern only against directories', async () => {
    const root = await treeDir({
      '.gitignore': '*.log\nbuild/\n',
      'train.log': '',
      'logs/run.log': '',
      'build/out.o': '',
      'src/build': 'a file named build',
      'src/main.py': '',
    });
    expect(await keptFiles(root)).toEqual(['.gitignore', 'src/build', 'src/main.py']);
  });

  it('re-includes with `!` a file whose directory is not ignored', async () => {
    const root = await treeDir({ '.gitignore': '*.env\n!example.env\n', 'prod.env': 's', 'example.env': '' });
    expect(await keptFiles(root)).toEqual(['.gitignore', 'example.env']);
  });

  it('applies a nested .gitignore relative to its directory, its rules winning over the root', async () => {
    const root = await treeDir({
      '.gitignore': '*.csv\n',
      'data/.gitignore': '!small.csv\n/raw\n',
      'data/small.csv': '',
      'data/big.csv': '',
      'data/raw/x.txt': '',
      'raw/y.txt': '',
      'top.csv': '',
    });
    expect(await keptFiles(root)).toEqual(['.gitignore', 'data/.gitignore', 'data/small.csv', 'raw/y.txt']);
  });

  it('applies the .gitignore files above the workspace up to the git work tree root', async () => {
    const repo = await treeDir({
      '.gitignore': 'secrets.env\nproject/out/\n',
      'project/.gitignore': '*.tmp\n',
      'project/secrets.env': 'k',
      'project/scratch.tmp': '',
      'project/out/model.pt': '',
      'project/train.py': '',
    });
    await mkdir(join(repo, '.git'));
    expect(await keptFiles(join(repo, 'project'))).toEqual(['.gitignore', 'train.py']);
  });

  it('ignores .gitignore files above the workspace when it is not inside a git work tree', async () => {
    const outer = await treeDir({ '.gitignore': '*.py\n', 'project/train.py': '' });
    expect(await keptFiles(join(outer, 'project'))).toEqual(['train.py']);
  });

  it('still packs a workspace that a .gitignore above it ignores as a whole', async () => {
    const repo = await treeDir({ '.gitignore': 'build/\n', 'build/run.py': '' });
    await mkdir(join(repo, '.git'));
    expect(await keptFiles(join(repo, 'build'))).toEqual(['run.py']);
  });
});

describe('names never packed', () => {
  it('leaves out .git, caches, node_modules and virtual environments at any depth', async () => {
    const root = await treeDir({
      'train.py': '',
      'lib/.git': 'gitdir: ../.git/modules/lib',
      'lib/__pycache__/m.pyc': '',
      'lib/.ruff_cache/x': '',
      'ui/node_modules/react/index.js': '',
      'tools/env/pyvenv.cfg': '',
      'tools/env/bin/python': '',
      'tools/run.py': '',
    });
    await writeTree(root, { 'notebooks/.ipynb_checkpoints/a.ipynb': '' });
    expect(await keptFiles(root)).toEqual(['tools/run.py', 'train.py']);
  });

  it('leaves out credential stores at any depth, whatever the ignore files say: a run from home ships no keys', async () => {
    const home = await treeDir({
      '.ssh/id_ed25519': 'PRIVATE KEY',
      '.aws/credentials': '[default]',
      '.gnupg/private-keys-v1.d/k.key': '',
      '.netrc': 'machine example.com password x',
      '.git-credentials': 'https://user:token@example.com',
      'proj/.aws/config': '[profile x]',
      'proj/train.py': '',
      '.torchxignore': '!.ssh\n',
    });
    expect(await keptFiles(home)).toEqual(['.torchxignore', 'proj/train.py']);
  });
});

describe('fnmatch, as Python has it on POSIX', () => {
  it.each([
    ['*.py', 'a/b/c.py', true],
    ['a?c', 'abc', true],
    ['a?c', 'a/c', true],
    ['[!a]bc', 'abc', false],
    ['[!a]bc', 'xbc', true],
    ['[a-c]x', 'bx', true],
    ['[]]x', ']x', true],
    ['[x', '[x', true],
    ['a\\*b', 'a\\zzb', true],
    ['a.b', 'axb', false],
    ['(a|b)', '(a|b)', true],
    ['x', 'X', false],
  ])('fnmatch(%j) on %j is %s', (pattern, name, expected) => {
    expect(compileFnmatch(pattern)(name)).toBe(expected);
  });

  it('treats a line that is only `.` or a comment as no line at all', () => {
    expect(TorchxIgnore.parse('.\n# c\n   \n*.pyc # x\n').length).toBe(1);
  });
});
