/**
 * The local server's console lines (one per request and per state change, when verbose), written in batches:
 * the lines of one turn of the event loop go out in one write instead of a write each, so a server answering
 * thousands of requests a second does not spend a system call per line. Order is kept.
 *
 * @module
 */

/** Writes lines to a stream; {@link LineWriter.flush} writes what is pending at once. */
export interface LineWriter {
  (line: string): void;
  flush(): void;
}

/**
 * Lines to `out`, one write per event-loop turn.
 *
 * @example
 * ```ts
 * const log = batchedLines(process.stdout);
 * log('GET /v1/apps -> 200');
 * ```
 */
export function batchedLines(out: { write(text: string): unknown }): LineWriter {
  let pending: string[] = [];
  const flush = () => {
    if (pending.length === 0) return;
    const text = `${pending.join('\n')}\n`;
    pending = [];
    out.write(text);
  };
  const log = (line: string) => {
    if (pending.length === 0) setImmediate(flush);
    pending.push(line);
  };
  return Object.assign(log, { flush });
}
