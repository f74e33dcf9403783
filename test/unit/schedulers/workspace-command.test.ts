import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { commandInWorkspace, unpackThenRun } from '../../../lib/schedulers/workspace.js';

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'txs-unpack-'));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A gzip tar of `files` (name → content), made by the system's tar. */
function archiveOf(files: Record<string, string>): string {
  const src = tempDir();
  for (const [name, content] of Object.entries(files)) writeFileSync(join(src, name), content);
  const archive = join(tempDir(), 'ws.tar.gz');
  execFileSync('tar', ['-czf', archive, '-C', src, ...Object.keys(files)]);
  return archive;
}

function run(command: string[], cwd: string): string {
  const [file, ...args] = command;
  return execFileSync(file as string, args, { cwd, encoding: 'utf8' });
}

describe('unpackThenRun', () => {
  it('lays the archive over the working directory, then runs the entrypoint there with its arguments as given', () => {
    const archive = archiveOf({ 'train.py': 'print(1)\n', 'cfg.yaml': 'lr: 0.1\n' });
    const workdir = tempDir();
    writeFileSync(join(workdir, 'from-image.txt'), 'kept\n');
    const out = run(
      unpackThenRun(archive, 'sh', ['-c', 'ls; printf "[%s]" "$@"', 'sh', 'a b', '$HOME', "it's", '*']),
      workdir,
    );
    expect(out.split('\n').slice(0, 3)).toEqual(['cfg.yaml', 'from-image.txt', 'train.py']);
    expect(out).toContain("[a b][$HOME][it's][*]");
    expect(readFileSync(join(workdir, 'train.py'), 'utf8')).toBe('print(1)\n');
  });

  it('overwrites a file of the image with the workspace file of the same name', () => {
    const archive = archiveOf({ 'train.py': 'new\n' });
    const workdir = tempDir();
    writeFileSync(join(workdir, 'train.py'), 'old\n');
    expect(run(unpackThenRun(archive, 'cat', ['train.py']), workdir)).toBe('new\n');
  });

  it('fails before the entrypoint runs when the archive cannot be unpacked', () => {
    const workdir = tempDir();
    const missing = join(workdir, 'absent.tar.gz');
    expect(() =>
      execFileSync('sh', unpackThenRun(missing, 'touch', ['ran']).slice(1), { cwd: workdir, stdio: 'pipe' }),
    ).toThrow();
    expect(() => readFileSync(join(workdir, 'ran'))).toThrow();
  });

  it('passes the entrypoint the exit status it ends with', () => {
    const archive = archiveOf({ 'x.txt': 'x' });
    const workdir = tempDir();
    const [file, ...args] = unpackThenRun(archive, 'sh', ['-c', 'exit 7']);
    let status: number | null = null;
    try {
      execFileSync(file as string, args, { cwd: workdir, stdio: 'pipe' });
    } catch (error) {
      status = (error as { status: number | null }).status;
    }
    expect(status).toBe(7);
  });
});

describe('commandInWorkspace', () => {
  it('takes apart the command unpackThenRun made, arguments as given', () => {
    expect(commandInWorkspace(unpackThenRun('/w/a.tar.gz', 'python', ['-c', 'print(1)', '']))).toEqual({
      archivePath: '/w/a.tar.gz',
      entrypoint: 'python',
      args: ['-c', 'print(1)', ''],
    });
  });

  it('leaves any other command alone, even one starting with sh -c', () => {
    expect(commandInWorkspace(['python', 'train.py'])).toBeUndefined();
    expect(commandInWorkspace(['sh', '-c', 'tar -xzf "$0" && exec "$@"'])).toBeUndefined();
    expect(commandInWorkspace(['sh', '-c', 'echo "$0"', '/w/a.tar.gz', 'python'])).toBeUndefined();
  });
});
