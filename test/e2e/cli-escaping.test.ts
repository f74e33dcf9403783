/**
 * `bin/txs.js` as a process against stub servers that send hostile text: errors and tables escape control
 * and format characters; `txs log` into a pipe passes the job's bytes through unchanged.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeApi } from '../unit/cli/fake-api.js';
import { apiError, startStubServer } from '../unit/cli/helpers.js';

const BIN = fileURLToPath(new URL('../../bin/txs.js', import.meta.url));
const run = promisify(execFile);

/** Runs `node bin/txs.js …` (stdout and stderr are pipes, not terminals). */
async function txs(args: string[], endpoint: string): Promise<{ code: number; out: string; err: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [BIN, ...args], {
      env: { ...process.env, TXS_CONFIG: '/dev/null', TXS_ENDPOINT: endpoint },
      timeout: 60_000,
    });
    return { code: 0, out: stdout, err: stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, out: e.stdout, err: e.stderr };
  }
}

/** Raw characters no escaped output may contain: controls but newline (ESC, BEL, CR…), U+202E, U+200B. */
const RAW_CONTROLS = /[^\P{Cc}\n]|[\u202e\u200b]/u;

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

describe('txs output escaping', () => {
  it('escapes control and bidi characters in a server error message and its details', async () => {
    const stub = await startStubServer(() =>
      apiError(400, 'ValidationFailed', 'no app \u001b]0;pwned\u0007 here \u202Eevil\u001b[2J', [
        { path: 'appId', message: 'spoof\rline' },
      ]),
    );
    closers.push(stub.close);
    const { code, err } = await txs(['status', 'local_cwd://torchx/evil-k3x9'], stub.url);
    expect(code).not.toBe(0);
    expect(err).not.toMatch(RAW_CONTROLS);
    expect(err).toContain('no app \\u{1B}]0;pwned\\u{7} here \\u{202E}evil\\u{1B}[2J');
    expect(err).toContain('spoof\\u{D}line');
  });

  it('escapes format characters in names in the txs list table, even into a pipe', async () => {
    const api = await startFakeApi();
    closers.push(api.close);
    api.addApp('local_cwd://torchx/train-k3x9', { name: 'tra\u202Ein\u200Bx', states: ['SUCCEEDED'] });
    const { code, out } = await txs(['list'], api.url);
    expect(code).toBe(0);
    expect(out).toContain('tra\\u{202E}in\\u{200B}x');
    expect(out).not.toMatch(RAW_CONTROLS);
  });

  it('passes a job’s log bytes through unchanged when stdout is a pipe (txs log > file)', async () => {
    const api = await startFakeApi();
    closers.push(api.close);
    const lines = ['\u001b[31mred\u001b[0m', 'progress 10%\r50%', 'שלום \u200F👩\u200D💻'];
    api.addApp('local_cwd://torchx/echo-k3x9', {
      name: 'echo',
      states: ['SUCCEEDED'],
      logs: { 'echo/0': lines },
    });
    const { code, out } = await txs(['log', 'local_cwd://torchx/echo-k3x9'], api.url);
    expect(code).toBe(0);
    expect(out).toBe(`${lines.join('\n')}\n`);
  });
});
