import { spawn, spawnSync } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { closedPort } from '../unit/cli/helpers.js';

const BIN = fileURLToPath(new URL('../../bin/txs.js', import.meta.url));

/** Runs `node bin/txs.js …` as a user would (package.json "bin"), with no build step. */
function txs(args: string[], env: Record<string, string> = {}) {
  const result = spawnSync(process.execPath, [BIN, ...args], {
    encoding: 'utf8',
    env: { ...process.env, TXS_CONFIG: '/dev/null', ...env },
    timeout: 60_000,
  });
  return { code: result.status, out: result.stdout, err: result.stderr };
}

describe('bin/txs.js', () => {
  it('runs the TypeScript CLI without a build step', () => {
    const { code, out } = txs(['--help'], { TXS_PREBUILT: '0' });
    expect(code).toBe(0);
    expect(out).toContain('Usage: txs [options] [command]');
    expect(out).toContain('run [options] [component] [args...]');
  });

  it('sets the process exit code from the command', async () => {
    const port = await closedPort();
    const { code, err } = txs(['list'], { TXS_ENDPOINT: `http://127.0.0.1:${port}` });
    expect(code).toBe(5);
    expect(err).toContain(`error: cannot reach http://127.0.0.1:${port}: connection refused`);
  });

  it('exits quietly when the reader of its output goes away (txs … | head)', async () => {
    const child = spawn(process.execPath, [BIN, '--help'], {
      env: { ...process.env, TXS_CONFIG: '/dev/null' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // Close the read end before the CLI has started: its first write gets EPIPE.
    child.stdout.destroy();
    let err = '';
    child.stderr.on('data', (chunk: Buffer) => {
      err += chunk.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(err).toBe('');
    expect(code).toBe(0);
  });
});

describe('bin/txs.js in a clone with a build', () => {
  // A miniature clone: the real bin/txs.js, a source entry and a built entry that say which one ran.
  const clone = mkdtempSync(join(tmpdir(), 'txs-bin-'));
  afterAll(() => rmSync(clone, { recursive: true, force: true }));
  mkdirSync(join(clone, 'bin'));
  mkdirSync(join(clone, 'lib/cli'), { recursive: true });
  mkdirSync(join(clone, 'dist/cli'), { recursive: true });
  copyFileSync(BIN, join(clone, 'bin/txs.js'));
  symlinkSync(fileURLToPath(new URL('../../node_modules', import.meta.url)), join(clone, 'node_modules'));
  const entry = (said: string) => `export async function runProcess() { console.log('${said}'); }\n`;
  writeFileSync(join(clone, 'lib/cli/main.ts'), entry('sources'));
  writeFileSync(join(clone, 'lib/cli/format.ts'), 'export {};\n');
  writeFileSync(join(clone, 'dist/cli/main.js'), entry('built'));
  writeFileSync(
    join(clone, 'dist/cli/sources.json'),
    JSON.stringify(['lib/cli/main.ts', 'lib/cli/format.ts']),
  );

  /** Sets the modification time of a file of the clone, in seconds since the epoch. */
  const touch = (file: string, seconds: number) => utimesSync(join(clone, file), seconds, seconds);
  const run = (env: Record<string, string> = {}) =>
    spawnSync(process.execPath, [join(clone, 'bin/txs.js')], {
      encoding: 'utf8',
      env: { ...process.env, TXS_PREBUILT: '', ...env },
    }).stdout.trim();

  it('runs the built CLI while no source it was built from is newer than it', () => {
    touch('lib/cli/main.ts', 1_000);
    touch('lib/cli/format.ts', 1_000);
    touch('dist/cli/main.js', 2_000);
    expect(run()).toBe('built');
  });

  it('runs the sources once any of them changed after the build', () => {
    touch('lib/cli/main.ts', 1_000);
    touch('lib/cli/format.ts', 3_000);
    touch('dist/cli/main.js', 2_000);
    expect(run()).toBe('sources');
  });

  it('runs the sources when a file the build listed is gone', () => {
    touch('lib/cli/main.ts', 1_000);
    touch('dist/cli/main.js', 2_000);
    writeFileSync(
      join(clone, 'dist/cli/sources.json'),
      JSON.stringify(['lib/cli/main.ts', 'lib/cli/format.ts', 'lib/cli/removed.ts']),
    );
    expect(run()).toBe('sources');
    writeFileSync(
      join(clone, 'dist/cli/sources.json'),
      JSON.stringify(['lib/cli/main.ts', 'lib/cli/format.ts']),
    );
  });

  it('follows TXS_PREBUILT over the modification times', () => {
    touch('lib/cli/main.ts', 1_000);
    touch('lib/cli/format.ts', 1_000);
    touch('dist/cli/main.js', 2_000);
    expect(run({ TXS_PREBUILT: '0' })).toBe('sources');
    touch('lib/cli/format.ts', 3_000);
    expect(run({ TXS_PREBUILT: '1' })).toBe('built');
  });
});
