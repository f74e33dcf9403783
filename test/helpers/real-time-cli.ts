/**
 * `txs` run in-process against a real server, in real time: its output captured, no files to read, no
 * standard input, Ctrl-C never pressed. What the end-to-end suites share; each passes the caller's environment
 * and, where it watches the exchanges, its own transport.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { type CliIO, type HttpTransport, main } from '../../lib/cli/index.js';

/** How one `txs` invocation sees its machine. */
export interface RealTimeCli {
  /** The caller's environment (`PATH` is added from this process unless given). */
  env: Record<string, string>;
  cwd: string;
  homeDir: string;
  /** How requests are sent (the CLI's own transport when omitted). */
  transport?: HttpTransport;
  /** Waits; by default real time, each wait at most `maxSleepMs`. */
  sleep?: CliIO['sleep'];
  /** The longest real wait of the default `sleep` (ms; default 200). */
  maxSleepMs?: number;
}

/** Runs `txs args…` and answers its exit code and what it printed. */
export async function runTxs(
  args: readonly string[],
  cli: RealTimeCli,
): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const maxSleepMs = cli.maxSleepMs ?? 200;
  const io: CliIO = {
    stdout: {
      write: (t) => {
        out += t;
      },
      isTTY: false,
    },
    stderr: {
      write: (t) => {
        err += t;
      },
      isTTY: false,
    },
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...cli.env },
    cwd: cli.cwd,
    homeDir: cli.homeDir,
    readFile: async () => {
      throw Object.assign(new Error('no files in this test'), { code: 'ENOENT' });
    },
    readStdin: async () => '',
    now: () => Date.now(),
    sleep:
      cli.sleep ??
      (async (ms, signal) => {
        await delay(Math.min(ms, maxSleepMs), undefined, signal === undefined ? {} : { signal });
      }),
    onInterrupt: () => () => undefined,
    ...(cli.transport === undefined ? {} : { transport: cli.transport }),
  };
  const code = await main([...args], io);
  return { code, out, err };
}
