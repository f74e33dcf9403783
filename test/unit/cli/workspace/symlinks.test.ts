/**
 * Symlinks in a workspace are never followed: one pointing inside the tree is stored as a relative link,
 * one pointing outside is refused with an error naming it.
 */
import { symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { WorkspaceError } from '../../../../lib/cli/workspace/errors.js';
import { walkWorkspace } from '../../../../lib/cli/workspace/walk.js';
import { treeDir } from './tree.js';

async function links(root: string): Promise<Record<string, string | undefined>> {
  const { entries } = await walkWorkspace(root);
  return Object.fromEntries(entries.filter((e) => e.type === 'symlink').map((e) => [e.path, e.linkname]));
}

async function refusal(root: string): Promise<WorkspaceError> {
  const error = await walkWorkspace(root).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(WorkspaceError);
  return error as WorkspaceError;
}

describe('symlinks in a workspace', () => {
  it('stores a link to a file or directory inside the tree as a relative link, without following it', async () => {
    const root = await treeDir({
      'pkg/model.py': '',
      'pkg/latest.py': { symlink: 'model.py' },
      alias: { symlink: 'pkg' },
      'pkg/up.py': { symlink: '../pkg/./model.py' },
    });
    expect(await links(root)).toEqual({ alias: 'pkg', 'pkg/latest.py': 'model.py', 'pkg/up.py': 'model.py' });
    const { entries } = await walkWorkspace(root);
    expect(entries.map((entry) => entry.path)).not.toContain('alias/model.py');
  });

  it('rewrites an absolute link into the tree as a relative one', async () => {
    const root = await treeDir({ 'data/train.csv': '' });
    await symlink(join(root, 'data/train.csv'), join(root, 'current.csv'));
    expect(await links(root)).toEqual({ 'current.csv': 'data/train.csv' });
  });

  it('refuses a link to an absolute path outside the tree, naming it and how to leave it out', async () => {
    const root = await treeDir({ 'train.py': '', 'conf/creds': { symlink: '/etc/passwd' } });
    const error = await refusal(root);
    expect(error.problem).toBe('symlink-outside');
    expect(error.path).toBe('conf/creds');
    expect(error.message).toContain('conf/creds');
    expect(error.hint).toContain('.torchxignore');
  });

  it('refuses a relative link that climbs out of the tree', async () => {
    const root = await treeDir({ 'pkg/escape': { symlink: '../../outside.txt' } });
    expect((await refusal(root)).path).toBe('pkg/escape');
  });

  it('accepts an outside link that an ignore file leaves out', async () => {
    const root = await treeDir({ 'train.py': '', home: { symlink: '/root' }, '.torchxignore': 'home\n' });
    expect(await links(root)).toEqual({});
  });
});
