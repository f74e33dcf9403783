/**
 * Per-replica log files of the local scheduler, and reading them in pages.
 *
 * A replica writes its stdout and stderr itself, to `stdout.log` and `stderr.log` (see `replica-process.ts`).
 * The server tails them (`log-tail.ts`) and writes whole lines, in the order it read them, to `combined.log`
 * (a line is never split by a line of the other stream). Next to each file, `<file>.idx` records when bytes
 * arrived: lines of `<offset> <epochMs>`, one per read whose time differs from the previous one. A line's
 * time is the time its first byte was read; `since`/`until` filter on it.
 *
 * @module
 */
import { appendFile, type FileHandle, open, readFile } from 'node:fs/promises';

/** Suffix of a log file's arrival-time index. */
export const INDEX_SUFFIX = '.idx';

/** A partial line longer than this is written to `combined.log` as a line of its own (and read as one). */
export const MAX_LINE_BYTES = 1024 * 1024;

const NEWLINE = 0x0a;
const NEWLINE_BUFFER = Buffer.from('\n');

/** Where {@link LineInterleaver} puts whole lines. */
export interface LineSink {
  /** Appends `chunk`, whose first byte arrived at `time`. */
  write(chunk: Buffer, time: number): void;
}

/**
 * A log file plus its arrival-time index, appended from `startOffset` (the file's current size). Writes are
 * buffered until {@link flush}, which appends the data, then the index entries, to the files (0600).
 */
export class IndexedLogWriter implements LineSink {
  private offset: number;
  private lastTime = Number.NaN;
  private data: Buffer[] = [];
  private index = '';

  constructor(
    readonly file: string,
    startOffset = 0,
  ) {
    this.offset = startOffset;
  }

  /** Bytes in the file once buffered writes are flushed. */
  get size(): number {
    return this.offset;
  }

  write(chunk: Buffer, time: number): void {
    if (chunk.length === 0) return;
    if (time !== this.lastTime) {
      this.index += `${this.offset} ${time}\n`;
      this.lastTime = time;
    }
    this.offset += chunk.length;
    this.data.push(chunk);
  }

  /** Appends what was written since the last flush: the data first, then its index entries. */
  async flush(): Promise<void> {
    if (this.data.length === 0) return;
    const data = Buffer.concat(this.data);
    const index = this.index;
    this.data = [];
    this.index = '';
    await appendFile(this.file, data, { mode: 0o600 });
    await appendFile(this.file + INDEX_SUFFIX, index, { mode: 0o600 });
  }
}

/** The two output streams of a process. */
export type OutputStream = 'stdout' | 'stderr';

/**
 * Writes whole lines from several streams to one sink, in the order the lines completed. Holds each stream's
 * incomplete last line until its newline arrives (or the stream ends, or it exceeds {@link MAX_LINE_BYTES}).
 */
export class LineInterleaver {
  private readonly partial = new Map<OutputStream, { bytes: Buffer; time: number }>();

  constructor(private readonly out: LineSink) {}

  /** Bytes of `stream` held back as an incomplete line. */
  heldBytes(stream: OutputStream): number {
    return this.partial.get(stream)?.bytes.length ?? 0;
  }

  /** Adds `chunk` of `stream`, which arrived at `time`. */
  push(stream: OutputStream, chunk: Buffer, time: number): void {
    const held = this.partial.get(stream);
    const data = held ? Buffer.concat([held.bytes, chunk]) : chunk;
    const lastNewline = data.lastIndexOf(NEWLINE);
    if (lastNewline < 0) {
      if (data.length < MAX_LINE_BYTES) {
        this.partial.set(stream, { bytes: data, time: held?.time ?? time });
        return;
      }
      this.partial.delete(stream);
      this.out.write(Buffer.concat([data, NEWLINE_BUFFER]), held?.time ?? time);
      return;
    }
    if (held) {
      // The first line started when the held bytes arrived; the rest started in this chunk.
      const firstEnd = data.indexOf(NEWLINE) + 1;
      this.out.write(data.subarray(0, firstEnd), held.time);
      if (firstEnd <= lastNewline) this.out.write(data.subarray(firstEnd, lastNewline + 1), time);
    } else {
      this.out.write(data.subarray(0, lastNewline + 1), time);
    }
    const rest = data.subarray(lastNewline + 1);
    if (rest.length > 0) this.partial.set(stream, { bytes: Buffer.from(rest), time });
    else this.partial.delete(stream);
  }

  /** Writes `stream`'s incomplete last line, ended with a newline. */
  flush(stream: OutputStream): void {
    const held = this.partial.get(stream);
    if (!held) return;
    this.partial.delete(stream);
    this.out.write(Buffer.concat([held.bytes, NEWLINE_BUFFER]), held.time);
  }
}

/** Paths of a replica's three log files. */
export interface ReplicaLogPaths {
  stdout: string;
  stderr: string;
  combined: string;
}

/** A log file's arrival times: ascending offsets, each with the epoch ms its bytes arrived. */
export interface ArrivalIndex {
  offsets: number[];
  times: number[];
}

/** Reads `<file>.idx`; empty when it does not exist. Malformed lines (a torn last write) are skipped. */
export async function readArrivalIndex(file: string): Promise<ArrivalIndex> {
  const index: ArrivalIndex = { offsets: [], times: [] };
  let text: string;
  try {
    text = await readFile(file + INDEX_SUFFIX, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return index;
    throw e;
  }
  for (const line of text.split('\n')) {
    const [offsetText, timeText] = line.split(' ');
    const offset = Number(offsetText);
    const time = Number(timeText);
    if (offsetText === '' || !Number.isSafeInteger(offset) || !Number.isFinite(time)) continue;
    index.offsets.push(offset);
    index.times.push(time);
  }
  return index;
}

/** Position of the last entry with offset ≤ `offset`, or -1. */
function entryAt(index: ArrivalIndex, offset: number): number {
  let low = 0;
  let high = index.offsets.length - 1;
  let found = -1;
  while (low <= high) {
    const mid = (low + high) >> 1;
    if ((index.offsets[mid] as number) <= offset) {
      found = mid;
      low = mid + 1;
    } else {
      high = mid - 1;
    }
  }
  return found;
}

/** When the byte at `offset` arrived; `fallback` before the first entry. */
export function arrivalTimeAt(index: ArrivalIndex, offset: number, fallback: number): number {
  const i = entryAt(index, offset);
  return i < 0 ? fallback : (index.times[i] as number);
}

/** The offset of the first write that arrived at or after `since` (the last write's offset if none did). */
export function offsetOfTime(index: ArrivalIndex, since: number): number {
  const i = index.times.findIndex((t) => t >= since);
  if (i >= 0) return index.offsets[i] as number;
  return index.offsets[index.offsets.length - 1] ?? 0;
}

/** What to read from a log file. */
export interface ReadLinesRequest {
  file: string;
  /** Byte offset of the first line to read (always the start of a line). */
  offset: number;
  /** Most lines to return. */
  limit: number;
  /** The file is complete: a last line without a newline is returned too. */
  complete: boolean;
  /** Only lines whose first byte arrived at or after this epoch ms. */
  since?: number;
  /** Only lines whose first byte arrived before this epoch ms. */
  until?: number;
  /** Arrival time assumed for bytes before the first index entry. */
  fallbackTime: number;
}

/** Lines read and where to continue. */
export interface ReadLinesResult {
  lines: string[];
  /** Offset of the first line not returned. */
  nextOffset: number;
  /** Every line available now was read (only an incomplete last line may remain). */
  caughtUp: boolean;
  /** A line at or after `until` was reached: nothing further can match. */
  untilReached: boolean;
}

const READ_BLOCK_BYTES = 64 * 1024;
const MAX_PAGE_BYTES = 4 * 1024 * 1024;

function decodeLine(bytes: Buffer): string {
  const end = bytes.length > 0 && bytes[bytes.length - 1] === 0x0d ? bytes.length - 1 : bytes.length;
  return bytes.toString('utf8', 0, end);
}

/**
 * Reads up to `limit` lines from `offset`. Lines come without their newline (and without a trailing `\r`).
 * An incomplete last line is held back unless the file is `complete`. A missing file reads as empty.
 */
export async function readLogLines(request: ReadLinesRequest): Promise<ReadLinesResult> {
  const { file, limit, complete, since, until, fallbackTime } = request;
  let handle: FileHandle;
  try {
    handle = await open(file, 'r');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') {
      return { lines: [], nextOffset: request.offset, caughtUp: true, untilReached: false };
    }
    throw e;
  }
  try {
    const timed = since !== undefined || until !== undefined;
    const index = timed ? await readArrivalIndex(file) : undefined;
    let position = request.offset;
    let skipPartialFirstLine = false;
    if (index && since !== undefined) {
      const jump = offsetOfTime(index, since);
      if (jump > position) {
        position = jump;
        // The jump lands where a write began, which may be inside a line that started earlier.
        const before = Buffer.alloc(1);
        const { bytesRead } = await handle.read(before, 0, 1, position - 1);
        skipPartialFirstLine = bytesRead === 1 && before[0] !== NEWLINE;
      }
    }
    const lines: string[] = [];
    let pending: Buffer = Buffer.alloc(0);
    let pendingStart = position;
    let readPosition = position;
    let endOfFile = false;
    let pageBytes = 0;
    let untilReached = false;
    const take = (length: number, consumed: number): void => {
      const lineStart = pendingStart;
      const bytes = pending.subarray(0, length);
      pending = pending.subarray(consumed);
      pendingStart += consumed;
      pageBytes += consumed;
      if (skipPartialFirstLine) {
        skipPartialFirstLine = false;
        return;
      }
      if (index) {
        const time = arrivalTimeAt(index, lineStart, fallbackTime);
        if (until !== undefined && time >= until) {
          untilReached = true;
          pendingStart = lineStart;
          return;
        }
        if (since !== undefined && time < since) return;
      }
      lines.push(decodeLine(bytes));
    };
    while (lines.length < limit && pageBytes < MAX_PAGE_BYTES && !untilReached) {
      const newline = pending.indexOf(NEWLINE);
      if (newline >= 0) {
        take(newline, newline + 1);
        continue;
      }
      if (pending.length >= MAX_LINE_BYTES) {
        take(MAX_LINE_BYTES, MAX_LINE_BYTES);
        continue;
      }
      if (endOfFile) break;
      const block = Buffer.alloc(READ_BLOCK_BYTES);
      const { bytesRead } = await handle.read(block, 0, READ_BLOCK_BYTES, readPosition);
      if (bytesRead === 0) {
        endOfFile = true;
        continue;
      }
      readPosition += bytesRead;
      const fresh = block.subarray(0, bytesRead);
      pending = pending.length > 0 ? Buffer.concat([pending, fresh]) : fresh;
    }
    if (endOfFile && complete && pending.length > 0 && lines.length < limit && !untilReached) {
      take(pending.length, pending.length);
    }
    const caughtUp = untilReached || (endOfFile && (pending.length === 0 || !complete));
    return { lines, nextOffset: pendingStart, caughtUp, untilReached };
  } finally {
    await handle.close();
  }
}
