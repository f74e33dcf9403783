/**
 * Writes a list of workspace entries as a deterministic `.tar.gz`: a POSIX ustar stream (tar-stream adds pax
 * records for names longer than ustar holds or not ASCII) with fixed times and owners, compressed by zlib
 * with no file name or time in the gzip header and its OS byte fixed to Unix, hashed as it is written.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { type Pack, pack as tarPack } from 'tar-stream';
import { type FileEntry, isFile, type WorkspaceEntry } from './walk.js';

/**
 * The modification time of every entry: 2000-01-01T00:00:00Z. Not 0: zip (and so a wheel built inside the
 * job) refuses times before 1980, in any time zone.
 */
export const ARCHIVE_MTIME = new Date(Date.UTC(2000, 0, 1));

/** The gzip header's OS byte and the value written there: zlib puts the OS it was built for (19 on macOS). */
const GZIP_OS_OFFSET = 9;
const GZIP_OS_UNIX = 3;

/** The size of the pieces handed to zlib: each write is a trip to libuv's thread pool, so not 512-byte headers. */
const BATCH_BYTES = 256 * 1024;

/** What writing an archive produced. */
export interface WrittenArchive {
  /** SHA-256 (hex) and length of the `.tar.gz` bytes. */
  readonly sha256: string;
  readonly size: number;
  /** SHA-256 (hex) of the uncompressed tar. */
  readonly tarSha256: string;
}

/** Writes a file's content into the archive, chunk by chunk, through `write`. */
export type ContentWriter = (file: FileEntry, write: (chunk: Buffer) => Promise<void>) => Promise<void>;

/** A pass-through that hashes and counts what goes through; with `patchGzipOs`, fixes the gzip OS byte first. */
class Tap extends Transform {
  readonly hash = createHash('sha256');
  bytes = 0;
  constructor(private readonly patchGzipOs: boolean) {
    super();
  }
  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback) {
    let data = chunk;
    if (this.patchGzipOs && this.bytes <= GZIP_OS_OFFSET && this.bytes + chunk.length > GZIP_OS_OFFSET) {
      data = Buffer.from(chunk);
      data[GZIP_OS_OFFSET - this.bytes] = GZIP_OS_UNIX;
    }
    this.hash.update(data);
    this.bytes += data.length;
    done(null, data);
  }
}

/** Gathers small chunks into pieces of about {@link BATCH_BYTES}. */
class Batch extends Transform {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback) {
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    if (this.pendingBytes >= BATCH_BYTES) this.release();
    done();
  }
  override _flush(done: TransformCallback) {
    this.release();
    done();
  }
  private release() {
    if (this.pendingBytes === 0) return;
    this.push(this.pending.length === 1 ? this.pending[0] : Buffer.concat(this.pending, this.pendingBytes));
    this.pending = [];
    this.pendingBytes = 0;
  }
}

type Sink = ReturnType<Pack['entry']>;

/** Starts the tar entry for `entry`; `done` settles when the entry is complete or the archive fails. */
function startEntry(archive: Pack, entry: WorkspaceEntry): { sink: Sink; done: Promise<void> } {
  let sink: Sink | undefined;
  const done = new Promise<void>((resolve, reject) => {
    sink = archive.entry(
      {
        name: entry.type === 'directory' ? `${entry.path}/` : entry.path,
        type: entry.type,
        size: entry.size,
        mode: entry.mode,
        mtime: ARCHIVE_MTIME,
        uid: 0,
        gid: 0,
        uname: '',
        gname: '',
        ...(entry.linkname === undefined ? {} : { linkname: entry.linkname }),
      },
      (error) => (error ? reject(error) : resolve()),
    );
  });
  // A failed entry is reported through `done` (awaited once its content is written) or by the content
  // writer itself; without these, streamx and the promise would also raise it as uncaught.
  done.catch(() => {});
  (sink as Sink).on('error', () => {});
  return { sink: sink as Sink, done };
}

/** Writes one chunk into a tar entry, waiting while the archive is backed up. */
function writeChunk(sink: Sink, chunk: Buffer): Promise<void> {
  if (sink.write(chunk)) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const settle = (error?: Error) => {
      sink.off('drain', onDrain);
      sink.off('close', onClose);
      if (error) reject(error);
      else resolve();
    };
    const onDrain = () => settle();
    const onClose = () => settle(new Error('the archive stream closed'));
    sink.on('drain', onDrain);
    sink.on('close', onClose);
  });
}

/**
 * Writes `entries`, in order, as a `.tar.gz` at `path` (created 0600; removed if anything fails), taking
 * each file's content from `writeContent`; `onFile` is called after each file.
 */
export async function writeArchive(
  entries: readonly WorkspaceEntry[],
  path: string,
  gzipLevel: number,
  writeContent: ContentWriter,
  onFile: (file: FileEntry) => void,
): Promise<WrittenArchive> {
  const archive = tarPack();
  // The pipeline sees a failure through the archive's iterator; without a listener, streamx would also throw it.
  archive.on('error', () => {});
  const tarTap = new Tap(false);
  const gzipTap = new Tap(true);
  const written = pipeline(
    archive as unknown as AsyncIterable<Buffer>,
    new Batch(),
    tarTap,
    createGzip({ level: gzipLevel }),
    gzipTap,
    createWriteStream(path, { mode: 0o600 }),
  );
  const feed = async () => {
    for (const entry of entries) {
      const { sink, done } = startEntry(archive, entry);
      if (isFile(entry)) {
        await writeContent(entry, (chunk) => writeChunk(sink, chunk));
        onFile(entry);
      }
      sink.end(null);
      await done;
    }
    archive.finalize();
  };
  try {
    await Promise.all([
      feed().catch((error: unknown) => {
        archive.destroy(error as Error);
        throw error;
      }),
      written,
    ]);
  } catch (error) {
    await rm(path, { force: true });
    throw error;
  }
  return { sha256: gzipTap.hash.digest('hex'), size: gzipTap.bytes, tarSha256: tarTap.hash.digest('hex') };
}
