/**
 * `npm start`'s banner, from the real entry point (lib/local/main.ts) in a child process.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const MAIN = fileURLToPath(new URL('../../lib/local/main.ts', import.meta.url));

/** Starts the local server with `env` and resolves with its banner (up to the `try:` line), then stops it. */
function banner(env: Record<string, string>): Promise<string> {
  const dataDir = mkdtempSync(join(tmpdir(), 'txs-banner-'));
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN], {
    env: { ...process.env, TXS_DATA_DIR: dataDir, TXS_IN_MEMORY: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('try:')) child.kill('SIGTERM');
    });
    child.once('error', reject);
    child.once('exit', () => {
      rmSync(dataDir, { recursive: true, force: true });
      resolve(out);
    });
  });
}

describe('local server banner', () => {
  it('tells txs where the server listens when PORT moved it off 8080, and prints the dashboard’s one-time link', async () => {
    const out = await banner({ PORT: '0' });
    const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out)?.[1];
    expect(url).toBeDefined();
    expect(url).not.toBe('http://127.0.0.1:8080');
    expect(out).toContain(`TXS_ENDPOINT=${url} npx txs run --wait utils.echo`);
    // The server's own socket, which txs uses: `<port>.sock` beside the token file.
    const port = url?.split(':')[2];
    expect(out).toMatch(new RegExp(`socket: +\\S+/${port}\\.sock \\(txs and the plugin use it`));
    // The dashboard's one-time link, on the same address.
    expect(out).toMatch(new RegExp(`dashboard: +${url}/\\?token=[A-Za-z0-9_-]{43} \\(works once`));
  }, 60_000);
});
