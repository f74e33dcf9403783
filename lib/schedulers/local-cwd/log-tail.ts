/**
 * Tails a replica's `stdout.log` and `stderr.log` (which the replica writes itself) into their arrival-time
 * indexes and `combined.log`, and keeps a cursor (`tail.json`) so that a restarted server resumes exactly
 * where the previous one stopped: `combined.log` beyond the cursor (written by a server that died before
 * saving it) is cut off and rebuilt, so no line is lost or doubled.
 *
 * @module
 */
import { open, readFile, rename, stat, truncate, writeFile } from 'node:fs/promises';
import path from 'node:path';
import {
  INDEX_SUFFIX,
  IndexedLogWriter,
  LineInterleaver,
  type OutputStream,
  type ReplicaLogPaths,
  readArrivalIndex,
} from './log-files.js';

/** File in the replica's directory holding the tail position. */
export const TAIL_CURSOR_FILE = 'tail.json';

/** Most bytes read from one stream per poll (the rest waits for the next poll). */
const MAX_READ_BYTES = 1024 * 1024;

const STREAMS: readonly OutputStream[] = ['stdout', 'stderr'];

/** Where the tail stands: bytes of each stream turned into whole lines of `combined.log`, and its size. */
interface TailCursor {
  v: 1;
  stdout: number;
  stderr: number;
  combined: number;
}

function isCursor(value: unknown): value is TailCursor {
  const c = value as Partial<TailCursor> | null;
  return (
    c !== null &&
    typeof c === 'object' &&
    c.v === 1 &&
    [c.stdout, c.stderr, c.combined].every((n) => Number.isSafeInteger(n) && (n as number) >= 0)
  );
}

async function readCursor(file: string): Promise<TailCursor> {
  try {
    const parsed: unknown = JSON.parse(await readFile(file, 'utf8'));
    if (isCursor(parsed)) return parsed;
  } catch {
    // Missing (a fresh replica) or torn: start from the beginning.
  }
  return { v: 1, stdout: 0, stderr: 0, combined: 0 };
}

async function sizeOf(file: string): Promise<number> {
  try {
    return (await stat(file)).size;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw e;
  }
}

/** Keeps `combined.log` and its index to the first `size` bytes (what the saved cursor vouches for). */
async function cutCombined(file: string, size: number): Promise<void> {
  if ((await sizeOf(file)) > size) await truncate(file, size);
  const index = await readArrivalIndex(file);
  const keep = index.offsets.findIndex((offset) => offset >= size);
  if (keep < 0) return;
  const lines = index.offsets.slice(0, keep).map((offset, i) => `${offset} ${index.times[i]}\n`);
  await writeFile(file + INDEX_SUFFIX, lines.join(''), { mode: 0o600 });
}

/** The tail of one replica's output. Create it with {@link ReplicaLogTailer.open}. */
export class ReplicaLogTailer {
  private readonly position: Record<OutputStream, number>;
  /** Offset of each stream's last index entry (entries are only appended past it). */
  private readonly indexed: Record<OutputStream, number>;
  private readonly lastTime: Record<OutputStream, number> = { stdout: Number.NaN, stderr: Number.NaN };
  private readonly combined: IndexedLogWriter;
  private readonly interleaver: LineInterleaver;
  private running: Promise<boolean> = Promise.resolve(false);

  private constructor(
    private readonly paths: ReplicaLogPaths,
    private readonly cursorFile: string,
    private readonly now: () => number,
    cursor: TailCursor,
    indexed: Record<OutputStream, number>,
  ) {
    this.position = { stdout: cursor.stdout, stderr: cursor.stderr };
    this.indexed = indexed;
    this.combined = new IndexedLogWriter(paths.combined, cursor.combined);
    this.interleaver = new LineInterleaver(this.combined);
  }

  /** Opens the tail of a replica whose logs are in `paths`, resuming from its cursor when there is one. */
  static async open(paths: ReplicaLogPaths, now: () => number): Promise<ReplicaLogTailer> {
    const cursorFile = path.join(path.dirname(paths.combined), TAIL_CURSOR_FILE);
    const cursor = await readCursor(cursorFile);
    await cutCombined(paths.combined, cursor.combined);
    const indexed = { stdout: -1, stderr: -1 };
    for (const stream of STREAMS) {
      const index = await readArrivalIndex(paths[stream]);
      indexed[stream] = index.offsets[index.offsets.length - 1] ?? -1;
    }
    return new ReplicaLogTailer(paths, cursorFile, now, cursor, indexed);
  }

  /** Reads what the replica wrote since the last poll (up to 1 MiB a stream). Resolves true if it read any. */
  poll(): Promise<boolean> {
    this.running = this.running.catch(() => false).then(() => this.readOnce());
    return this.running;
  }

  /**
   * Reads everything left, writes held partial lines and saves the cursor. Call once the replica's process
   * group is gone (nothing writes any more).
   */
  async finish(): Promise<void> {
    while (await this.poll()) {
      // Keep reading until both files are read to their end.
    }
    this.running = this.running
      .catch(() => false)
      .then(async () => {
        for (const stream of STREAMS) this.interleaver.flush(stream);
        await this.save();
        return false;
      });
    await this.running;
  }

  private async readOnce(): Promise<boolean> {
    let readAny = false;
    for (const stream of STREAMS) {
      const chunk = await this.readNew(stream);
      if (chunk === undefined) continue;
      readAny = true;
      const offset = this.position[stream];
      const time = this.now();
      if (offset > this.indexed[stream] && time !== this.lastTime[stream]) {
        await writeFile(this.paths[stream] + INDEX_SUFFIX, `${offset} ${time}\n`, { flag: 'a', mode: 0o600 });
        this.indexed[stream] = offset;
        this.lastTime[stream] = time;
      }
      this.position[stream] += chunk.length;
      this.interleaver.push(stream, chunk, time);
    }
    if (readAny) await this.save();
    return readAny;
  }

  private async readNew(stream: OutputStream): Promise<Buffer | undefined> {
    let handle: Awaited<ReturnType<typeof open>>;
    try {
      handle = await open(this.paths[stream], 'r');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw e;
    }
    try {
      const size = (await handle.stat()).size;
      const length = Math.min(size - this.position[stream], MAX_READ_BYTES);
      if (length <= 0) return undefined;
      const buffer = Buffer.alloc(length);
      const { bytesRead } = await handle.read(buffer, 0, length, this.position[stream]);
      return bytesRead === 0 ? undefined : buffer.subarray(0, bytesRead);
    } finally {
      await handle.close();
    }
  }

  /** Appends the new combined lines, then records how far each stream is turned into them. */
  private async save(): Promise<void> {
    await this.combined.flush();
    const cursor: TailCursor = {
      v: 1,
      stdout: this.position.stdout - this.interleaver.heldBytes('stdout'),
      stderr: this.position.stderr - this.interleaver.heldBytes('stderr'),
      combined: this.combined.size,
    };
    const temporary = `${this.cursorFile}.${process.pid}.tmp`;
    await writeFile(temporary, JSON.stringify(cursor), { mode: 0o600 });
    await rename(temporary, this.cursorFile);
  }
}
