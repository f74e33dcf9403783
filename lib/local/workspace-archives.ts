/**
 * The local server's workspace archives: `HEAD` / `PUT /v1/workspaces/{sha256}` store each archive once,
 * under its SHA-256, in the server's private data directory; a run that names one gets a fresh unpacked copy
 * of it. Bodies are streamed to disk (never through the JSON handlers), checked against the hash and length
 * they were announced with, and renamed into place only when both match, so a stored archive is always whole
 * and is what its name says.
 *
 * @module
 */
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  type JobWorkspace,
  MAX_WORKSPACE_ARCHIVE_BYTES,
  ValidationError,
  WORKSPACE_SHA256_PATTERN,
} from '../specs/index.js';
import { sendJson } from './lambda-bridge.js';
import { extractWorkspace, UnsafeArchiveError } from './workspace-extract.js';

const ROUTE = /^\/v1\/workspaces\/([^/]*)$/;

/** A workspace unpacked for one run: where, and what it is. */
export interface PreparedWorkspace extends JobWorkspace {
  /** The directory the replicas start in. */
  dir: string;
}

function refuse(res: ServerResponse, status: number, code: string, path: string, message: string): void {
  sendJson(res, status, { error: { code, message: `${path}: ${message}`, details: [{ path, message }] } });
}

/** The archives of one local server, in `<dataDir>/workspaces/`. */
export class WorkspaceArchives {
  private readonly archives: string;
  private readonly runs: string;

  constructor(dataDir: string) {
    this.archives = join(dataDir, 'workspaces', 'archives');
    this.runs = join(dataDir, 'workspaces', 'runs');
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
      refuse(
        res,
        400,
        'ValidationFailed',
        'sha256',
        'must be the archive’s SHA-256: 64 lowercase hex digits',
      );
    } else if (req.method === 'HEAD') {
      req.resume();
      const size = await this.sizeOf(sha256);
      res.writeHead(size === undefined ? 404 : 200, size === undefined ? {} : { 'x-workspace-size': size });
      res.end();
    } else if (req.method === 'PUT') {
      await this.receive(req, res, sha256);
    } else {
      req.resume();
      res.writeHead(405, { allow: 'HEAD, PUT', 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          error: { code: 'MethodNotAllowed', message: `${req.method} ${path}: use HEAD or PUT` },
        }),
      );
    }
    return true;
  }

  /** Whether the server holds the archive `sha256` (`POST /v1/workspaces` answers `stored: true`). */
  async holds(sha256: string): Promise<boolean> {
    return (await this.sizeOf(sha256)) !== undefined;
  }

  /** Bytes of the stored archive, or undefined when there is none. */
  private async sizeOf(sha256: string): Promise<number | undefined> {
    try {
      return (await stat(this.archivePath(sha256))).size;
    } catch {
      return undefined;
    }
  }

  private async receive(req: IncomingMessage, res: ServerResponse, sha256: string): Promise<void> {
    const length = Number(req.headers['content-length']);
    if (req.headers['content-length'] === undefined || !Number.isSafeInteger(length) || length < 0) {
      req.resume();
      refuse(res, 411, 'LengthRequired', 'Content-Length', 'is required: send the archive’s size in bytes');
      return;
    }
    if (length > MAX_WORKSPACE_ARCHIVE_BYTES) {
      req.resume();
      refuse(
        res,
        413,
        'PayloadTooLarge',
        'Content-Length',
        `${length} bytes is over the ${MAX_WORKSPACE_ARCHIVE_BYTES}-byte limit; leave large files out with .torchxignore`,
      );
      return;
    }
    if ((await this.sizeOf(sha256)) !== undefined) {
      req.resume();
      res.writeHead(204);
      res.end();
      return;
    }
    await mkdir(this.archives, { recursive: true, mode: 0o700 });
    const temp = join(this.archives, `.upload-${randomBytes(8).toString('hex')}`);
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
          400,
          'ChecksumMismatch',
          'checksum',
          received !== length
            ? `received ${received} bytes, not the ${length} announced; send the archive again`
            : `the body's SHA-256 is ${actual}, not ${sha256}; send the archive under its own SHA-256`,
        );
        return;
      }
      await rename(temp, this.archivePath(sha256));
      res.writeHead(201, { location: `/v1/workspaces/${sha256}` });
      res.end();
    } catch (error) {
      await rm(temp, { force: true });
      if (!res.headersSent) {
        refuse(res, 400, 'ChecksumMismatch', 'checksum', `the upload failed: ${(error as Error).message}`);
      }
    }
  }

  /**
   * A fresh unpacked copy of the archive `sha256` for one run, in a directory named by `runKey` (the same
   * key gives the same directory, unpacked once: an idempotent retry finds its run's copy).
   *
   * @throws ValidationError naming `workspace.sha256` when no such archive is stored, or it cannot be unpacked safely.
   */
  async prepare(sha256: string, runKey: string): Promise<PreparedWorkspace> {
    const size = await this.sizeOf(sha256);
    if (size === undefined) {
      throw ValidationError.forField(
        'workspace.sha256',
        `no workspace archive ${sha256} on this server; upload it first with PUT /v1/workspaces/${sha256} (txs run --workspace does)`,
      );
    }
    const dir = join(this.runs, runKey);
    // `<runKey>.json` (what the copy holds) is written before the copy is renamed into place: a directory
    // there is always whole, with its description beside it.
    const described = join(this.runs, `${runKey}.json`);
    await mkdir(this.runs, { recursive: true, mode: 0o700 });
    if (await exists(dir)) {
      const { fileCount } = JSON.parse(await readFile(described, 'utf8')) as { fileCount: number };
      return { sha256, size, fileCount, archive: this.archivePath(sha256), dir };
    }
    const temp = join(this.runs, `.unpack-${randomBytes(8).toString('hex')}`);
    try {
      const { fileCount } = await extractWorkspace(this.archivePath(sha256), temp);
      await writeFile(described, JSON.stringify({ sha256, fileCount }), { mode: 0o600 });
      try {
        await rename(temp, dir);
      } catch (error) {
        // A concurrent retry of the same request put its copy there first: the same archive, so use it.
        const code = (error as NodeJS.ErrnoException).code;
        if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw error;
        await rm(temp, { recursive: true, force: true });
      }
      return { sha256, size, fileCount, archive: this.archivePath(sha256), dir };
    } catch (error) {
      await rm(temp, { recursive: true, force: true });
      if (error instanceof UnsafeArchiveError) {
        throw ValidationError.forField(
          'workspace.sha256',
          `archive ${sha256} cannot be unpacked: ${error.message}; pack it with txs run --workspace`,
        );
      }
      throw error;
    }
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}
