/**
 * Keeps the embedded DynamoDB's LevelDB honest through a full disk. LevelDB's write of a record to its log
 * can fail half-way (ENOSPC); later appends to that log then land where a restart's recovery no longer reads
 * them, so writes acknowledged after the failure would be lost by a crash. So after a failed write the guard
 * admits no more writes (each answers {@link DiskFullError}) until it has reopened the database, which
 * recovers the log up to the failure and starts a new one; it tries that only once there is room for it.
 * Reads go on meanwhile. It also turns a failed write into an error dynalite answers (a 500 it sends) rather
 * than one it throws out of a callback, which would end the process.
 *
 * @module
 */
import { statfsSync } from 'node:fs';
import { DiskFullError, isDiskFull } from '../specs/index.js';

/** The `__type` of the answer dynalite sends for a write the database could not make. */
const STORAGE_FAILURE_TYPE = 'com.amazonaws.dynamodb.v20120810#InternalServerError';

/** Marks that answer as a full disk, for the in-process request handler ({@link LevelGuard.failureOf}). */
const DISK_FULL_MESSAGE = 'local store: no space left on device';

/** Free bytes the disk must have before a reopen is tried (LevelDB writes a table and a new log). */
const REOPEN_FREE_BYTES = 1024 * 1024;

/** The write methods of abstract-level's implementation contract, which its public methods await. */
const LEVEL_WRITES = ['_put', '_del', '_batch'] as const;

type LevelMethod = (...args: unknown[]) => Promise<unknown>;

/** The parts of abstract-level's database the guard uses. */
export type GuardedLevel = {
  /** With `passive`, waits for the open under way and fails as it failed. */
  open?(options?: { passive: boolean }): Promise<void>;
} & Partial<Record<(typeof LEVEL_WRITES)[number], LevelMethod>>;

/** Guards one LevelDB database; see the module. */
export class LevelGuard {
  private damaged = false;
  /** Closed by a repair that could not reopen it. */
  private closed = false;
  private repairing?: Promise<void>;
  private inFlight = 0;
  private idle?: () => void;
  private readonly opened: Promise<void>;
  private open = false;

  /**
   * @param db the database (dynalite's store's `db`, an abstract-level instance).
   * @param path where it lives, for messages.
   * @param close closes it as abstract-level does (not dynalite's wrapper, which ends dynalite's life).
   */
  constructor(
    private readonly db: GuardedLevel,
    readonly path: string,
    private readonly close: () => Promise<void>,
  ) {
    for (const name of LEVEL_WRITES) {
      const write = db[name];
      if (typeof write !== 'function') continue;
      db[name] = async (...args: unknown[]) => {
        try {
          return await write.apply(db, args);
        } catch (error) {
          this.damaged = true;
          const message = isDiskFull(error) ? DISK_FULL_MESSAGE : 'local store: the write failed';
          throw Object.assign(error as Error, {
            statusCode: 500,
            body: { __type: STORAGE_FAILURE_TYPE, message: `${message} (${(error as Error).message})` },
          });
        }
      };
    }
    this.opened = this.openedOnce();
    this.opened.then(
      () => {
        this.open = true;
      },
      () => undefined,
    );
  }

  /**
   * Waits until a request may reach the database, and counts it in flight (call {@link done} after).
   *
   * @throws DiskFullError for a write while the database cannot be repaired (still no room), or why the
   *   database could not open.
   */
  async admit(write: boolean): Promise<void> {
    if (!this.open) await this.opened;
    if (this.repairing) await this.repairing;
    // A damaged database takes no writes until reopened; a closed one (a reopen that failed) takes nothing.
    const refused = () => this.damaged && (write || this.closed);
    if (refused()) {
      this.repairing ??= this.repair().finally(() => {
        this.repairing = undefined;
      });
      await this.repairing;
      if (refused()) throw new DiskFullError(this.path);
    }
    this.inFlight++;
  }

  /** A request admitted by {@link admit} ended. */
  done(): void {
    this.inFlight--;
    if (this.inFlight === 0) this.idle?.();
  }

  /** The error a response stands for, when it is a full disk's answer. */
  failureOf(statusCode: number, body: string): DiskFullError | undefined {
    return statusCode === 500 && body.includes(DISK_FULL_MESSAGE)
      ? new DiskFullError(this.path, { cause: new Error(body) })
      : undefined;
  }

  /**
   * Reopens the database once requests under way ended, if the disk has room; else leaves it as it is. A
   * reopen that fails leaves it closed (every request is refused until a later reopen succeeds).
   */
  private async repair(): Promise<void> {
    if (!hasRoom(this.path)) return;
    if (this.inFlight > 0) await new Promise<void>((resolve) => (this.idle = resolve));
    this.idle = undefined;
    this.closed = true;
    try {
      await this.close();
      await this.db.open?.();
      this.closed = false;
      this.damaged = false;
    } catch (error) {
      console.error(`the local store at ${this.path} could not be reopened:`, error);
    }
  }

  private openedOnce(): Promise<void> {
    const { open } = this.db;
    if (open === undefined) return Promise.resolve();
    return (
      open
        .call(this.db, { passive: true })
        // The constructor's open drops its error: opening once more tells why (or succeeds after all).
        .catch(() => open.call(this.db, { passive: false }))
        .catch((error: unknown) => {
          throw isDiskFull(error) ? new DiskFullError(this.path, { cause: error }) : error;
        })
    );
  }
}

/** True when the file system holding `path` has room for a reopen (or cannot tell). */
function hasRoom(path: string): boolean {
  try {
    const stats = statfsSync(path);
    return stats.bavail * stats.bsize >= REOPEN_FREE_BYTES;
  } catch {
    return true;
  }
}
