import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../../lib/cli/errors.js';
import { chooseWorkspace, describeChoice } from '../../../../lib/cli/workspace/choice.js';

/** As the image schedulers take a workspace: aws_batch, slurm and local_cwd do, lsf does not. */
const takesWorkspace = (scheduler: string) => ['aws_batch', 'local_cwd', 'slurm'].includes(scheduler);
const base = { flag: undefined, configured: undefined, cwd: '/home/me/proj', takesWorkspace };

describe('chooseWorkspace', () => {
  it('ships the current directory by default to a scheduler that runs an image and takes a workspace, as torchx run does', () => {
    expect(chooseWorkspace({ ...base, scheduler: 'aws_batch' })).toEqual({
      dir: '/home/me/proj',
      source: 'default',
    });
  });

  it('refuses to ship the home directory or / by default, saying how to choose, but ships them when named', () => {
    for (const cwd of ['/home/me', '/home/me/', '/']) {
      const run = () => chooseWorkspace({ ...base, cwd, home: '/home/me', scheduler: 'aws_batch' });
      expect(run).toThrow(UsageError);
      expect(run).toThrow(cwd === '/' ? /root directory/ : /home directory/);
      expect(chooseWorkspace({ ...base, cwd, home: '/home/me', scheduler: 'aws_batch', flag: '.' })).toEqual({
        dir: cwd === '/' ? '/' : '/home/me',
        source: 'flag',
      });
    }
    expect(chooseWorkspace({ ...base, home: '/home/me', scheduler: 'aws_batch' })).toEqual({
      dir: '/home/me/proj',
      source: 'default',
    });
  });

  it('ships nothing by default to local_cwd, whose jobs run in the caller’s directory', () => {
    expect(chooseWorkspace({ ...base, scheduler: 'local_cwd' })).toBeUndefined();
  });

  it('ships nothing by default, and says nothing, to a scheduler that takes no workspace (TorchX leaves it out)', () => {
    expect(chooseWorkspace({ ...base, scheduler: 'lsf' })).toBeUndefined();
  });

  it('ships the default to slurm only with job_dir, as TorchX’s slurm copies a workspace only into job_dir', () => {
    expect(chooseWorkspace({ ...base, scheduler: 'slurm' })).toBeUndefined();
    expect(chooseWorkspace({ ...base, scheduler: 'slurm', configured: 'src' })).toBeUndefined();
    expect(chooseWorkspace({ ...base, scheduler: 'slurm', cfg: { job_dir: '' } })).toBeUndefined();
    expect(chooseWorkspace({ ...base, scheduler: 'slurm', cfg: { job_dir: '/scratch/run1' } })).toEqual({
      dir: '/home/me/proj',
      source: 'default',
    });
    // An explicit directory is sent, and the server names job_dir if it is missing.
    expect(chooseWorkspace({ ...base, scheduler: 'slurm', flag: 'src' })).toEqual({
      dir: '/home/me/proj/src',
      source: 'flag',
    });
  });

  it('takes --workspace "" as none, whatever the scheduler and .txsconfig say', () => {
    expect(chooseWorkspace({ ...base, scheduler: 'aws_batch', flag: '', configured: 'src' })).toBeUndefined();
    expect(chooseWorkspace({ ...base, scheduler: 'lsf', flag: '' })).toBeUndefined();
  });

  it('resolves --workspace DIR against the current directory, for local_cwd too', () => {
    expect(chooseWorkspace({ ...base, scheduler: 'local_cwd', flag: '../lib' })).toEqual({
      dir: '/home/me/lib',
      source: 'flag',
    });
  });

  it('refuses --workspace DIR for a scheduler that cannot take one, naming it and how to run without', () => {
    const attempt = () => chooseWorkspace({ ...base, scheduler: 'lsf', flag: 'src' });
    expect(attempt).toThrow(UsageError);
    expect(attempt).toThrow(/the lsf scheduler cannot take a workspace \(--workspace src\)/);
    try {
      attempt();
    } catch (error) {
      expect((error as UsageError).hint).toBe('run without one: --workspace ""');
    }
  });

  it('takes [cli:run] workspace from .txsconfig before the default, for local_cwd too, and "" there as none', () => {
    expect(chooseWorkspace({ ...base, scheduler: 'aws_batch', configured: 'src' })).toEqual({
      dir: '/home/me/proj/src',
      source: 'config',
    });
    expect(chooseWorkspace({ ...base, scheduler: 'local_cwd', configured: '.' })).toEqual({
      dir: '/home/me/proj',
      source: 'config',
    });
    expect(chooseWorkspace({ ...base, scheduler: 'aws_batch', configured: '' })).toBeUndefined();
  });

  it('leaves a .txsconfig workspace out for a scheduler that takes none, without an error (it is a default)', () => {
    expect(chooseWorkspace({ ...base, scheduler: 'lsf', configured: 'src' })).toBeUndefined();
  });

  it('takes --workspace sha256:<hex> as an archive the server holds, not a directory', () => {
    const sha256 = 'ab'.repeat(32);
    expect(chooseWorkspace({ ...base, scheduler: 'aws_batch', flag: `sha256:${sha256}` })).toEqual({
      sha256,
    });
    expect(chooseWorkspace({ ...base, scheduler: 'aws_batch', flag: `./sha256:${sha256}` })).toEqual({
      dir: `/home/me/proj/sha256:${sha256}`,
      source: 'flag',
    });
  });

  it('refuses sha256: followed by anything but a SHA-256, and an archive for a scheduler that takes none', () => {
    for (const flag of ['sha256:abc', `sha256:${'AB'.repeat(32)}`, 'sha256:']) {
      expect(() => chooseWorkspace({ ...base, scheduler: 'aws_batch', flag })).toThrow(/names no archive/);
    }
    expect(() => chooseWorkspace({ ...base, scheduler: 'lsf', flag: `sha256:${'a'.repeat(64)}` })).toThrow(
      /the lsf scheduler cannot take a workspace/,
    );
  });

  it('lets --workspace win over .txsconfig', () => {
    expect(chooseWorkspace({ ...base, scheduler: 'aws_batch', flag: 'other', configured: 'src' })).toEqual({
      dir: '/home/me/proj/other',
      source: 'flag',
    });
  });
});

describe('describeChoice', () => {
  it('says which directory a default run ships and how to turn it off', () => {
    expect(describeChoice({ dir: '/home/me', source: 'default' }, 'aws_batch')).toBe(
      'workspace: packing /home/me (the current directory, the default workspace for aws_batch; --workspace "" runs without it)',
    );
  });

  it('names a directory given with --workspace without advice', () => {
    expect(describeChoice({ dir: '/src', source: 'flag' }, 'local_cwd')).toBe('workspace: packing /src');
  });

  it('escapes control characters of the directory name', () => {
    expect(describeChoice({ dir: '/tmp/a\u001b[2Kb', source: 'flag' }, 'x')).not.toContain('\u001b');
  });
});
