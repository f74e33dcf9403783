/**
 * Everything the CLI touches outside itself — output streams, environment, files, clock, Ctrl-C — behind
 * one interface, so commands run the same in a terminal and in tests.
 *
 * @module
 */
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import type { HttpTransport } from './http-transport.js';

/** Where the CLI writes. */
export interface OutputStream {
  write(text: string): void;
  /** True when the stream is an interactive terminal (live status line, colours). */
  readonly isTTY: boolean;
}

/** The CLI's view of its process. */
export interface CliIO {
  /** Results: handles, tables, status, logs of `txs log`, JSON. */
  readonly stdout: OutputStream;
  /** Progress, warnings and errors. */
  readonly stderr: OutputStream;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Working directory (a `.txsconfig` here wins over one in `homeDir`). */
  readonly cwd: string;
  readonly homeDir: string;
  /** Reads a UTF-8 file; rejects with the fs error (code `ENOENT`, …). */
  readFile(path: string): Promise<string>;
  /** Reads standard input to the end (for `--app -`). */
  readStdin(): Promise<string>;
  /** Epoch ms. */
  now(): number;
  /** Waits `ms`; rejects with an AbortError when `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /**
   * Calls `handler` on the first Ctrl-C (SIGINT) until the returned function is called. A second Ctrl-C
   * ends the process as usual.
   */
  onInterrupt(handler: () => void): () => void;
  /** Sends the API requests; `node:http` / `node:https` when omitted (tests wrap it to watch the traffic). */
  readonly transport?: HttpTransport;
}

/** Wraps a Node stream as an {@link OutputStream}. */
function outputOf(stream: NodeJS.WriteStream): OutputStream {
  return {
    write: (text) => {
      stream.write(text);
    },
    get isTTY() {
      return stream.isTTY === true;
    },
  };
}

/**
 * The real process: `process.stdout`/`stderr`, `process.env`, the file system and SIGINT.
 *
 * @example
 * ```ts
 * process.exitCode = await main(process.argv.slice(2), processIO());
 * ```
 */
export function processIO(): CliIO {
  return {
    stdout: outputOf(process.stdout),
    stderr: outputOf(process.stderr),
    env: process.env,
    cwd: process.cwd(),
    homeDir: homedir(),
    readFile: (path) => readFile(path, 'utf8'),
    readStdin: async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(Buffer.from(chunk as Uint8Array));
      return Buffer.concat(chunks).toString('utf8');
    },
    now: () => Date.now(),
    sleep: (ms, signal) => delay(ms, undefined, signal === undefined ? {} : { signal }),
    onInterrupt: (handler) => {
      const listener = () => {
        process.removeListener('SIGINT', listener);
        handler();
      };
      process.on('SIGINT', listener);
      return () => {
        process.removeListener('SIGINT', listener);
      };
    },
  };
}

/** True when colour may be used on `stream` (a terminal, and `NO_COLOR` unset). */
export function useColor(io: CliIO, stream: OutputStream): boolean {
  return stream.isTTY && (io.env.NO_COLOR === undefined || io.env.NO_COLOR === '') && io.env.TERM !== 'dumb';
}
