/**
 * Local mode's record watch: a store wrapper that, once a write to an app record has committed (a
 * transition, a cancel request, a creation), wakes the status requests waiting for that record to change
 * (`GET /v1/apps/{scheduler}/{appId}?waitFor=…`). The local server is the only writer of its store, so every
 * change passes here; a waiter still reads the record again and compares revisions, so a wake-up without a
 * change costs one read and nothing else.
 *
 * @module
 */
import { type AppRecordStore, type RecordChanges, withRecords } from '../runner/index.js';
import type { AppHandle } from '../specs/index.js';

/**
 * Waiters by handle, woken after each committed write the wrapped store makes.
 *
 * @example
 * ```ts
 * const watch = new RecordWatch();
 * const store = watch.wrap(dynamoStore);
 * const { changed, stop } = watch.next(handle); // resolves after the next write to handle's record
 * ```
 */
export class RecordWatch implements RecordChanges {
  private readonly waiters = new Map<AppHandle, Set<(why: 'changed' | 'closed') => void>>();
  private closed = false;

  /** Starts listening for the next committed write to `handle`'s record. */
  next(handle: AppHandle): { changed: Promise<'changed' | 'closed'>; stop(): void } {
    if (this.closed) return { changed: Promise.resolve('closed'), stop: () => undefined };
    let wake!: (why: 'changed' | 'closed') => void;
    const changed = new Promise<'changed' | 'closed'>((resolve) => {
      wake = resolve;
    });
    let set = this.waiters.get(handle);
    if (set === undefined) {
      set = new Set();
      this.waiters.set(handle, set);
    }
    set.add(wake);
    return {
      changed,
      stop: () => {
        const current = this.waiters.get(handle);
        current?.delete(wake);
        if (current?.size === 0) this.waiters.delete(handle);
      },
    };
  }

  /** Wakes every waiter of `handle` (each listens once: it reads the record, then listens again). */
  changed(handle: AppHandle): void {
    const set = this.waiters.get(handle);
    if (set === undefined) return;
    this.waiters.delete(handle);
    for (const wake of set) wake('changed');
  }

  /** The server is stopping: every waiting request answers now, and none waits from here on. */
  close(): void {
    this.closed = true;
    const sets = [...this.waiters.values()];
    this.waiters.clear();
    for (const set of sets) for (const wake of set) wake('closed');
  }

  /** How many requests are waiting (for tests). */
  get waiting(): number {
    let count = 0;
    for (const set of this.waiters.values()) count += set.size;
    return count;
  }

  /** `store` whose writes wake this watch's waiters once they have committed (or failed). */
  wrap(store: AppRecordStore): AppRecordStore {
    const inner = store.records;
    const after = async <T>(handle: AppHandle, write: Promise<T>): Promise<T> => {
      try {
        return await write;
      } finally {
        this.changed(handle);
      }
    };
    return withRecords(store, {
      create: (record) => after(record.handle, inner.create(record)),
      transition: (handle, transition, current) =>
        after(handle, inner.transition(handle, transition, current)),
      markCancelRequested: (handle, at) => after(handle, inner.markCancelRequested(handle, at)),
    });
  }
}
