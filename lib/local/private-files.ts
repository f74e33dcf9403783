/**
 * The local server's private files: the data directory (0700, owned by the server's user), the lock that
 * keeps a second server off the same data directory, and the access token file (0600 in a 0700 directory).
 *
 * @module
 */
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';
import { type ProcessRef, processLiveness, processRef } from '../schedulers/local-cwd/index.js';

/** File name of the lock inside the data directory. */
export const LOCK_FILE = 'server.lock';

/** Raised when the local server cannot start on its data directory. */
export class DataDirError extends Error {
  override readonly name = 'DataDirError';
}

function currentUid(): number | undefined {
  return typeof process.getuid === 'function' ? process.getuid() : undefined;
}

/**
 * Creates `dir` (and parents) and makes it 0700. An existing directory must belong to the server's user.
 *
 * @throws DataDirError when `dir` is not a directory or belongs to another user.
 */
export function preparePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const info = statSync(dir);
  if (!info.isDirectory()) throw new DataDirError(`${dir} is not a directory`);
  const uid = currentUid();
  if (uid !== undefined && info.uid !== uid) {
    throw new DataDirError(
      `${dir} belongs to uid ${info.uid}, not to the user running the server (uid ${uid}); choose another TXS_DATA_DIR`,
    );
  }
  if ((info.mode & 0o777) !== 0o700) chmodSync(dir, 0o700);
}

/** What the lock file records. */
interface LockContent extends ProcessRef {
  /** Random id of the lock (tells a lock we took over from the one we read). */
  id: string;
}

function readLock(file: string): LockContent | undefined {
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<LockContent>;
    return typeof parsed.pid === 'number' && typeof parsed.id === 'string'
      ? (parsed as LockContent)
      : undefined;
  } catch {
    return undefined;
  }
}

function createLock(file: string, content: LockContent): boolean {
  let fd: number;
  try {
    fd = openSync(file, 'wx', 0o600);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw e;
  }
  try {
    writeSync(fd, `${JSON.stringify(content)}\n`);
  } finally {
    closeSync(fd);
  }
  return true;
}

/** A held data-directory lock. */
export interface DataDirLock {
  /** Removes the lock file if it is still ours. */
  release(): void;
}

/**
 * Takes `<dataDir>/server.lock` for this process. A lock left by a process that no longer runs (checked by pid
 * and start time) is taken over; a live one is an error naming its pid.
 *
 * @throws DataDirError when another live local server holds the data directory.
 */
export function lockDataDir(dataDir: string): DataDirLock {
  const file = path.join(dataDir, LOCK_FILE);
  const mine: LockContent = { ...processRef(process.pid), id: randomBytes(8).toString('hex') };
  for (let attempt = 0; attempt < 3; attempt++) {
    if (createLock(file, mine)) {
      return {
        release() {
          if (readLock(file)?.id === mine.id) unlinkSync(file);
        },
      };
    }
    const held = readLock(file);
    if (held !== undefined && processLiveness(held) !== 'dead') {
      throw new DataDirError(
        `another local server (pid ${held.pid}) is using the data directory ${dataDir}; stop it, or give this ` +
          'one its own TXS_DATA_DIR',
      );
    }
    // Stale (its process is gone) or unreadable: move it aside, and put it back if it changed meanwhile.
    const aside = `${file}.stale.${process.pid}.${randomBytes(4).toString('hex')}`;
    try {
      renameSync(file, aside);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw e;
    }
    const moved = readLock(aside);
    if (moved?.id !== held?.id) {
      // Another server replaced the stale lock between our read and our rename: it is theirs.
      renameSync(aside, file);
      continue;
    }
    unlinkSync(aside);
  }
  throw new DataDirError(`could not take the lock ${file}; another local server is starting on ${dataDir}`);
}

/**
 * Writes `token` to `file` with mode 0600 (atomically: a temporary file, then a rename). Under the default
 * location the directory is created 0700.
 */
export function writeTokenFile(file: string, token: string, privateDir: boolean): void {
  const dir = path.dirname(file);
  if (privateDir) preparePrivateDir(dir);
  else mkdirSync(dir, { recursive: true, mode: 0o700 });
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const fd = openSync(temporary, 'wx', 0o600);
  try {
    writeSync(fd, `${token}\n`);
  } finally {
    closeSync(fd);
  }
  renameSync(temporary, file);
}

/** Removes the token file if it still holds `token` (a later server on the same port may have replaced it). */
export function removeTokenFile(file: string, token: string): void {
  try {
    if (readFileSync(file, 'utf8').trim() === token) unlinkSync(file);
  } catch {
    // Already gone.
  }
}
