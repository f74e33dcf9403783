/**
 * The local server's workspace archives: `HEAD` / `PUT /v1/workspaces/{sha256}` store each archive once,
 * under its SHA-256, in the server's private data directory, checked once as it is stored (every entry safe
 * to unpack; its index written beside it); a run that names one gets it as its {@link JobWorkspace}, which
 * local_cwd unpacks into the run's own directory as the app starts. Bodies are streamed to disk (never
 * through the JSON handlers), checked against the hash and length they were announced with, and renamed
 * into place only when both match and the check passed, so a stored archive is always whole, safe, indexed
 * and what its name says. Archives unused for the retention period are removed ({@link WorkspaceArchives.sweep}).
 *
 * @module
 */
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream, readdirSync, rmSync, statSync, utimesSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { HttpRequestError } from '../../functions/shared/http-errors.js';
import type { RecordQueries } from '../runner/index.js';
import {
  checkWorkspaceArchive,
  readWorkspaceIndex,
  UnsafeArchiveError,
  type WorkspaceIndex,
  workspaceIndexPath,
} from '../schedulers/local-cwd/workspace-unpack.js';
import {
  type ApiErrorCode,
  type JobWorkspace,
  MAX_WORKSPACE_ARCHIVE_BYTES,
  ValidationError,
  WORKSPACE_SCHEDULERS,
  WORKSPACE_SHA256_PATTERN,
} from '../specs/index.js';
import { sendError } from './lambda-bridge.js';

/** Days an archive is kept after its last use (a `HEAD`, an upload or a run naming it), by default. */
export const DEFAULT_WORKSPACE_RETENTION_DAYS = 30;

const DAY_MS = 86_400_000;

/** Names of uploads in progress (and of what a crash left of one) in the archives directory. */
const TEMP_PREFIX = '.upload-';

/** Age after which a temporary file no upload of this server owns is a crash's leftover. */
const LEFTOVER_AGE_MS = DAY_MS;

const ROUTE = /^\/v1\/workspaces\/([^/]*)$/;

/** Refuses a request with `code` (its status from the one map), naming the field `path`. */
function refuse(res: ServerResponse, code: ApiErrorCode, path: string, message: string): void {
  sendError(res, new HttpRequestError(code, `${path}: ${message}`, [{ path, message }]));
}

/** The archives of one local server, in `<dataDir>/workspaces/`. */
export class WorkspaceArchives {
  private readonly archives: string;
  private readonly retentionMs: number;
  /** Temporary files of the uploads in progress. */
  private readonly inFlight = new Set<string>();

  /**
   * @param retentionDays days an archive is kept after its last use: a `HEAD`, an upload or a run naming it (default
   *   {@link DEFAULT_WORKSPACE_RETENTION_DAYS}); a positive number.
   */
  constructor(dataDir: string, retentionDays: number = DEFAULT_WORKSPACE_RETENTION_DAYS) {
    if (!(retentionDays > 0)) {
      throw new RangeError(
        `the workspace retention (TXS_WORKSPACE_RETENTION_DAYS) must be a positive number of days, not ${retentionDays}`,
      );
    }
    this.archives = join(dataDir, 'workspaces', 'archives');
    this.retentionMs = retentionDays * DAY_MS;
  }

  private archivePath(sha256: string): string {
    return join(this.archives, `${sha256}.tar.gz`);
  }

  /**
   * Answers `HEAD` and `PUT /v1/workspaces/{sha256}` (an admitted request); false for any other path, which
   * is left to the API's routes.
   */
  async serve(req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean> {
    const match = ROUTE.exec(path);
    if (match === null) return false;
    const sha256 = match[1] ?? '';
    if (!WORKSPACE_SHA256_PATTERN.test(sha256)) {
      req.resume();
      refuse(res, 'ValidationFailed', 'sha256', 'must be the archive’s SHA-256: 64 lowercase hex digits');
    } else if (req.method === 'HEAD') {
      req.resume();
      const size = this.markUsed(sha256)?.size;
      res.writeHead(size === undefined ? 404 : 200, size === undefined ? {} : { 'x-workspace-size': size });
      res.end();
    } else if (req.method === 'PUT') {
      await this.receive(req, res, sha256);
    } else {
      req.resume();
      sendError(res, new HttpRequestError('MethodNotAllowed', `${req.method} ${path}: use HEAD or PUT`), {
        allow: 'HEAD, PUT',
      });
    }
    return true;
  }

  /**
   * Whether the server holds the archive `sha256` (`POST /v1/workspaces` answers `stored: true`); marks it
   * used when it does, as a client about to run asks.
   */
  async holds(sha256: string): Promise<boolean> {
    return this.markUsed(sha256) !== undefined;
  }

  /**
   * The stored archive `sha256` (its size and index), marked as used now: its index's mtime, what
   * {@link sweep} counts from. Undefined when there is none, or it has no index (stored unchecked by an
   * earlier version). Synchronous, so no sweep of this process runs between the look and the mark.
   */
  private markUsed(sha256: string): { size: number; index: WorkspaceIndex } | undefined {
    const stored = this.find(sha256);
    if (stored === undefined) return undefined;
    const now = new Date();
    utimesSync(workspaceIndexPath(this.archivePath(sha256)), now, now);
    return stored;
  }

  /** The stored archive `sha256` (its size and index), not marked; undefined as for {@link markUsed}. */
  private find(sha256: string): { size: number; index: WorkspaceIndex } | undefined {
    const archive = this.archivePath(sha256);
    const index = readWorkspaceIndex(archive);
    const size = index === undefined ? undefined : sizeOfSync(archive);
    return index === undefined || size === undefined ? undefined : { size, index };
  }

  private async receive(req: IncomingMessage, res: ServerResponse, sha256: string): Promise<void> {
    const length = Number(req.headers['content-length']);
    if (req.headers['content-length'] === undefined || !Number.isSafeInteger(length) || length < 0) {
      req.resume();
      refuse(res, 'LengthRequired', 'Content-Length', 'is required: send the archive’s size in bytes');
      return;
    }
    if (length > MAX_WORKSPACE_ARCHIVE_BYTES) {
      req.resume();
      refuse(
        res,
        'PayloadTooLarge',
        'Content-Length',
        `${length} bytes is over the ${MAX_WORKSPACE_ARCHIVE_BYTES}-byte limit; leave large files out with .torchxignore`,
      );
      return;
    }
    if (this.markUsed(sha256) !== undefined) {
      req.resume();
      res.writeHead(204);
      res.end();
      return;
    }
    await mkdir(this.archives, { recursive: true, mode: 0o700 });
    const tempName = `${TEMP_PREFIX}${randomBytes(8).toString('hex')}`;
    const temp = join(this.archives, tempName);
    const tempIndex = `${temp}.json`;
    this.inFlight.add(tempName);
    this.inFlight.add(`${tempName}.json`);
    const hash = createHash('sha256');
    let received = 0;
    const counting = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        received += chunk.length;
        if (received > length) callback(new Error('the body is longer than its Content-Length'));
        else {
          hash.update(chunk);
          callback(null, chunk);
        }
      },
    });
    try {
      await pipeline(req, counting, createWriteStream(temp, { flags: 'wx', mode: 0o600 }));
      const actual = hash.digest('hex');
      if (received !== length || actual !== sha256) {
        await rm(temp, { force: true });
        refuse(
          res,
          'ChecksumMismatch',
          'checksum',
          received !== length
            ? `received ${received} bytes, not the ${length} announced; send the archive again`
            : `the body's SHA-256 is ${actual}, not ${sha256}; send the archive under its own SHA-256`,
        );
        return;
      }
      // Checked once, here: a run then needs only the index (no read of the archive before it answers).
      const index = await checkWorkspaceArchive(temp);
      await writeFile(tempIndex, JSON.stringify(index), { flag: 'wx', mode: 0o600 });
      // The index first: an archive under its final name always has its index beside it.
      const archive = this.archivePath(sha256);
      await rename(tempIndex, workspaceIndexPath(archive));
      await rename(temp, archive);
      res.writeHead(201, { location: `/v1/workspaces/${sha256}` });
      res.end();
    } catch (error) {
      await Promise.all([rm(temp, { force: true }), rm(tempIndex, { force: true })]);
      if (res.headersSent) return;
      if (error instanceof UnsafeArchiveError) {
        refuse(
          res,
          'ValidationFailed',
          'body',
          `the archive cannot be unpacked safely: ${error.message}; pack the directory with txs run --workspace`,
        );
      } else {
        refuse(res, 'ChecksumMismatch', 'checksum', `the upload failed: ${(error as Error).message}`);
      }
    } finally {
      this.inFlight.delete(tempName);
      this.inFlight.delete(`${tempName}.json`);
    }
  }

  /**
   * The stored archive `sha256` as a run's workspace, marked as used now (as `HEAD` and `PUT` of it do).
   *
   * @throws ValidationError naming `workspace.sha256` when no such archive is stored.
   */
  resolve(sha256: string): JobWorkspace {
    const stored = this.markUsed(sha256);
    if (stored === undefined) {
      throw ValidationError.forField(
        'workspace.sha256',
        `no workspace archive ${sha256} on this server; upload it first with PUT /v1/workspaces/${sha256} (txs run --workspace does)`,
      );
    }
    return {
      sha256,
      size: stored.size,
      fileCount: stored.index.fileCount,
      archive: this.archivePath(sha256),
    };
  }

  /**
   * A dry run's workspace: the archive `sha256` where a run would find it, and whether it is stored yet
   * (`size` and `fileCount` are 0 until it is). Reads nothing but its index and marks nothing: a dry run
   * packs without uploading, so its archive is usually not here.
   */
  describe(sha256: string): JobWorkspace & { stored: boolean } {
    const stored = this.find(sha256);
    return {
      sha256,
      size: stored?.size ?? 0,
      fileCount: stored?.index.fileCount ?? 0,
      archive: this.archivePath(sha256),
      stored: stored !== undefined,
    };
  }

  /**
   * Removes the archives not used (`HEAD`, upload, run) for the retention period (and their indexes), and
   * what crashed uploads left behind a day ago or more. An upload in flight and an archive in `inUse` (named
   * by an app that has not ended) are never touched. Synchronous: nothing of this process runs between the
   * look at an archive and its removal.
   *
   * @returns the SHA-256 of each archive removed.
   */
  sweep(now: number = Date.now(), inUse: ReadonlySet<string> = new Set()): string[] {
    let names: string[];
    try {
      names = readdirSync(this.archives);
    } catch {
      return [];
    }
    const removed: string[] = [];
    const cutoff = now - this.retentionMs;
    for (const name of names) {
      const path = join(this.archives, name);
      const modified = mtimeOfSync(path);
      if (modified === undefined) continue;
      if (name.startsWith(TEMP_PREFIX)) {
        if (!this.inFlight.has(name) && modified < now - LEFTOVER_AGE_MS) rmSync(path, { force: true });
        continue;
      }
      const match = /^([0-9a-f]{64})\.tar\.gz$/.exec(name);
      if (match !== null) {
        const indexPath = workspaceIndexPath(path);
        if ((mtimeOfSync(indexPath) ?? modified) >= cutoff || inUse.has(match[1] as string)) continue;
        rmSync(path, { force: true });
        rmSync(indexPath, { force: true });
        removed.push(match[1] as string);
      } else if (name.endsWith('.json') && modified < cutoff) {
        // An index whose archive is gone (a crash between the two renames of a PUT).
        if (mtimeOfSync(path.replace(/\.json$/, '.tar.gz')) === undefined) rmSync(path, { force: true });
      }
    }
    return removed;
  }

  /**
   * Sweeps now and then every `everyMs` (default an hour) until the returned function is called, keeping
   * the archives `inUse` names (asked before each sweep; an app created meanwhile has just marked its
   * archive used). A failed sweep goes to `onError` and the next one tries again. The returned function
   * resolves once a sweep in flight has finished, so the record store can be closed after it.
   */
  startSweeping(
    inUse: () => Promise<ReadonlySet<string>>,
    onError: (error: unknown) => void,
    everyMs = 3_600_000,
  ): () => Promise<void> {
    let stopped = false;
    let current: Promise<void> = Promise.resolve();
    const run = () => {
      current = current.then(() =>
        stopped
          ? undefined
          : inUse()
              .then((names) => {
                if (!stopped) this.sweep(Date.now(), names);
              })
              .catch((error: unknown) => {
                if (!stopped) onError(error);
              }),
      );
    };
    run();
    const timer = setInterval(run, everyMs);
    timer.unref();
    return async () => {
      stopped = true;
      clearInterval(timer);
      await current;
    };
  }
}

function sizeOfSync(path: string): number | undefined {
  try {
    return statSync(path).size;
  } catch {
    return undefined;
  }
}

function mtimeOfSync(path: string): number | undefined {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return undefined;
  }
}

/**
 * The archives named by the apps that have not ended on `schedulers` (those that take a workspace): a
 * `local_docker` container may restart from its archive long after the run named it.
 */
export async function archivesInUse(
  queries: Pick<RecordQueries, 'listActive'>,
  schedulers: readonly string[],
): Promise<Set<string>> {
  const names = new Set<string>();
  for (const scheduler of schedulers.filter((name) => WORKSPACE_SCHEDULERS.includes(name))) {
    let nextToken: string | undefined;
    do {
      const page = await queries.listActive(scheduler, 100, nextToken);
      for (const record of page.records) if (record.workspace) names.add(record.workspace.sha256);
      nextToken = page.nextToken;
    } while (nextToken !== undefined);
  }
  return names;
}
