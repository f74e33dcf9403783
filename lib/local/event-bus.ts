/**
 * The local server's in-process event bus: local scheduler events are delivered one at a time, in order, like
 * a queue. A delivery that fails for a reason that passes (a full disk, a busy store) is tried again later,
 * with back-off, until it lands or the bus closes: the app's record catches up with what its replicas did
 * once space is freed, without a restart. Re-delivering an older event after a newer one landed is harmless
 * (the state-change function applies events by their time and ignores stale ones).
 *
 * @module
 */
import { backoffDelay, isDiskFull } from '../specs/index.js';

/** Options of {@link LocalEventBus}. */
export interface LocalEventBusOptions {
  /** Delay before retry `attempt` (1, 2, …); default full jitter below 1 s, doubling up to 5 s. */
  retryDelayMs?: (attempt: number) => number;
  /** Told of a delivery's first failure (later failures of the same event are not repeated). */
  onError?: (error: unknown) => void;
}

/** True when delivering the same event later may succeed. */
function passes(error: unknown): boolean {
  return isDiskFull(error) || (error as { retryable?: unknown } | null)?.retryable === true;
}

/** Delivers events in order; see the module. */
export class LocalEventBus<E> {
  private chain: Promise<unknown> = Promise.resolve();
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private closed = false;
  private readonly retryDelayMs: (attempt: number) => number;
  private readonly onError: (error: unknown) => void;

  constructor(
    private readonly deliver: (event: E) => Promise<unknown>,
    options: LocalEventBusOptions = {},
  ) {
    this.retryDelayMs =
      options.retryDelayMs ?? ((attempt) => backoffDelay(attempt - 1, { baseMs: 1_000, capMs: 5_000 }));
    this.onError =
      options.onError ?? ((error) => console.error('local state-change delivery failed:', error));
  }

  /** Queues `event`; resolves once its first delivery attempt ended (landed, or failed and maybe rescheduled). */
  emit(event: E, attempt = 0): Promise<void> {
    const delivery = this.chain
      .then(() => this.deliver(event))
      .then(
        () => undefined,
        (error: unknown) => {
          if (attempt === 0) this.onError(error);
          if (!this.closed && passes(error)) this.retryLater(event, attempt + 1);
        },
      );
    this.chain = delivery;
    this.inFlight.add(delivery);
    void delivery.finally(() => this.inFlight.delete(delivery));
    return delivery;
  }

  /** Resolves once every delivery under way ended (retries not yet due are not waited for). */
  async idle(): Promise<void> {
    await Promise.allSettled([...this.inFlight]);
  }

  /** Drops the retries not yet due and refuses new ones. */
  close(): void {
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  private retryLater(event: E, attempt: number): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (!this.closed) void this.emit(event, attempt);
    }, this.retryDelayMs(attempt));
    timer.unref();
    this.timers.add(timer);
  }
}
