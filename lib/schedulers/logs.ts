/**
 * Log query types shared by every scheduler, and the helpers that filter and page log lines.
 *
 * @module
 */
/** Which output streams to read. Not every scheduler separates stdout and stderr. */
export type LogStream = 'stdout' | 'stderr' | 'combined';

/** What to read: one replica of one role, optionally filtered. */
export interface LogQuery {
  /** Role name. */
  role: string;
  /** Replica (node) index within the role; 0 by default. */
  replica?: number;
  /**
   * Keep only lines this filter matches. Build it from a caller's text with `compileLogFilter` (module
   * `log-filter.ts`: linear-time RE2 semantics), never from a JavaScript `RegExp`.
   */
  filter?: LineFilter;
  /** Only lines at or after this time. */
  since?: Date;
  /** Only lines before this time. */
  until?: Date;
  /** Which streams; `combined` by default. */
  streams?: LogStream;
}

/** A page request: the query plus paging. */
export interface LogPageRequest extends LogQuery {
  /** Most lines to return; the scheduler may return fewer. */
  limit?: number;
  /** Token from the previous page. */
  nextToken?: string;
}

/** One page of log lines (without trailing newlines). */
export interface LogPage {
  lines: string[];
  /** Pass it back to continue; absent when the log is complete and nothing more will come. */
  nextToken?: string;
  /**
   * True when every line available right now has been read. With a `nextToken` it means "caught up, more
   * may come while the app runs" (poll again later).
   */
  caughtUp: boolean;
}

/** Options of {@link Scheduler.logIter}. */
export interface LogIterOptions extends LogQuery {
  /** Follow the log until the app is terminal (like `tail -f`). */
  tail?: boolean;
  /** Delay between polls while tailing; 2 s by default. */
  pollIntervalMs?: number;
}

/** Default and largest page size. */
export const DEFAULT_LOG_PAGE_SIZE = 1_000;
export const MAX_LOG_PAGE_SIZE = 10_000;

/** A compiled line filter (see `compileLogFilter`). */
export interface LineFilter {
  /** The pattern as the caller wrote it. */
  readonly source: string;
  /** True when the line is kept. */
  matches(line: string): boolean;
}

/** Keeps the lines `filter` matches (all lines when there is none). */
export function filterLines(lines: readonly string[], filter: LineFilter | undefined): string[] {
  return filter ? lines.filter((line) => filter.matches(line)) : [...lines];
}

/** Splits text into lines without their newline characters (a final newline does not add an empty line). */
export function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split(/\r?\n/);
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** Encodes a page token (opaque to callers). */
export function encodeLogToken(value: unknown): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
}

/** Decodes a page token made by {@link encodeLogToken}; undefined when it is not one. */
export function decodeLogToken(token: string): unknown {
  try {
    return JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
}
