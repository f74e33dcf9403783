/**
 * Pages through a Slurm job's output file (`slurm-<job id>-<role>-<replica>.{out,err}` in the job's working
 * directory), by byte offset. Only whole lines are returned while the app runs; the token carries the offset.
 *
 * @module
 */
import { open } from 'node:fs/promises';
import { InvalidLogTokenError } from '../errors.js';
import {
  DEFAULT_LOG_PAGE_SIZE,
  decodeLogToken,
  encodeLogToken,
  type LogPage,
  MAX_LOG_PAGE_SIZE,
} from '../logs.js';

/** Most bytes read per page. */
export const MAX_LOG_READ_BYTES = 1 << 20;

/** Decodes a page token issued by {@link readLogFilePage} for `file`. */
export function offsetOf(token: string | undefined, file: string): number {
  if (token === undefined) return 0;
  const decoded = decodeLogToken(token) as { f?: unknown; o?: unknown } | undefined;
  if (
    decoded?.f !== file ||
    typeof decoded.o !== 'number' ||
    !Number.isSafeInteger(decoded.o) ||
    decoded.o < 0
  ) {
    throw new InvalidLogTokenError();
  }
  return decoded.o;
}

/**
 * Reads up to `limit` lines of `file` from the token's offset.
 *
 * @param finished the app is terminal: a last line without newline is returned and, once everything is read,
 *   no token is given back.
 */
export async function readLogFilePage(
  file: string,
  options: { nextToken?: string; limit?: number; finished: boolean },
): Promise<LogPage> {
  const limit = Math.min(Math.max(options.limit ?? DEFAULT_LOG_PAGE_SIZE, 1), MAX_LOG_PAGE_SIZE);
  const offset = offsetOf(options.nextToken, file);
  const more = (o: number): LogPage => ({
    lines: [],
    nextToken: encodeLogToken({ f: file, o }),
    caughtUp: true,
  });
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(file, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    // not written yet (pending) or never written
    return options.finished ? { lines: [], caughtUp: true } : more(offset);
  }
  try {
    const buffer = Buffer.alloc(MAX_LOG_READ_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, offset);
    const atEof = bytesRead < buffer.length;
    const lines: string[] = [];
    let consumed = 0;
    while (lines.length < limit) {
      const newline = buffer.indexOf(10, consumed);
      if (newline === -1 || newline >= bytesRead) break;
      lines.push(buffer.toString('utf8', consumed, newline).replace(/\r$/, ''));
      consumed = newline + 1;
    }
    if (lines.length < limit && atEof && options.finished && consumed < bytesRead) {
      lines.push(buffer.toString('utf8', consumed, bytesRead));
      consumed = bytesRead;
    }
    const nextNewline = buffer.indexOf(10, consumed);
    // caught up: nothing but (at most) an unfinished last line is left
    const caughtUp = atEof && (nextNewline === -1 || nextNewline >= bytesRead);
    const next = offset + consumed;
    if (options.finished && atEof && consumed === bytesRead) return { lines, caughtUp: true };
    return { lines, nextToken: encodeLogToken({ f: file, o: next }), caughtUp };
  } finally {
    await handle.close();
  }
}
