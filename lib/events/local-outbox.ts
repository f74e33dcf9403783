/**
 * Local mode's outbox (dynalite has no streams): a store wrapper that, once a transition's write has
 * committed, queues the change's event and publishes it in order, retrying with back-off. Publishing never
 * runs before the commit and never fails the request that made the change. A process crash between the
 * commit and the publication loses the local event (local events only feed the server's console); the
 * deployed stack publishes from the table's stream instead.
 *
 * @module
 */
import {
  type AppRecordStore,
  type AppStateChangePublisher,
  type TransitionOutcome,
  withRecords,
} from '../runner/index.js';
import { type AppHandle, type AppRecord, type AppStateTransition, retry } from '../specs/index.js';
import { changeEventOf, PUBLISH_BACKOFF } from './outbox.js';

/** Options of {@link withLocalOutbox}. */
export interface LocalOutboxOptions {
  /** Where events go. */
  publisher: AppStateChangePublisher;
  /** Attempts per event (default 5). */
  attempts?: number;
  /** Waits out the back-off between attempts (`PUBLISH_BACKOFF`; default: a timer). */
  sleep?: (ms: number) => Promise<void>;
  /** Called with an event that failed every attempt. */
  onGiveUp?: (error: unknown) => void;
}

/** A store whose committed transitions are published; `drain` waits for the queue. */
export type OutboxStore = AppRecordStore & {
  /** Resolves when every queued event was published or given up. */
  drain(): Promise<void>;
};

/**
 * Wraps `store` so every committed state change is published after the write, at least once per process.
 *
 * @example
 * ```ts
 * const store = withLocalOutbox(dynamoStore, { publisher: { publish: async (e) => console.log(e.id) } });
 * ```
 */
export function withLocalOutbox(store: AppRecordStore, options: LocalOutboxOptions): OutboxStore {
  const retryOptions = {
    ...PUBLISH_BACKOFF,
    maxAttempts: options.attempts ?? 5,
    ...(options.sleep === undefined ? {} : { sleep: options.sleep }),
  };
  let queue: Promise<void> = Promise.resolve();
  const deliver = async (event: NonNullable<ReturnType<typeof changeEventOf>>): Promise<void> => {
    try {
      await retry(() => options.publisher.publish(event), retryOptions);
    } catch (error) {
      options.onGiveUp?.(error);
    }
  };
  const transition = async (
    handle: AppHandle,
    change: AppStateTransition,
    current?: AppRecord,
  ): Promise<TransitionOutcome> => {
    const outcome = await store.records.transition(handle, change, current);
    if (outcome.applied) {
      const previous = { state: outcome.previous, stateReason: outcome.previousStateReason };
      const event = changeEventOf(previous, outcome.record, outcome.version);
      if (event !== undefined) queue = queue.then(() => deliver(event));
    }
    return outcome;
  };
  return { ...withRecords(store, { transition }), drain: () => queue };
}
