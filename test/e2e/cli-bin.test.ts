import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
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
    const { code, out } = txs(['--help']);
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
