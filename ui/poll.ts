import { ApiError } from './api.js';

/**
 * Live updates by polling: every `min` ms after a change or an action, backing off ×1.5 while nothing
 * changes (up to `max`), doubling after an error that asking again may cure, stopping after one it cannot
 * (the API's `error.retryable` is false: an unknown app, a refused identity, a server to configure; the
 * page shows the error and an action or a reload starts again), and paused while the tab is hidden.
 */
export class Poller {
  private delay: number;
  private timer: number | undefined;
  private stopped = false;
  private running = false;
  /** Set by an error retrying cannot cure; `hurry` (after an action) polls again. */
  private halted = false;
  private readonly onVisibility = () => {
    if (document.hidden) this.clear();
    else if (!this.halted) this.schedule(0);
  };

  /** `tick` resolves true when something changed. */
  constructor(
    private readonly tick: () => Promise<boolean>,
    private readonly min = 2000,
    private readonly max = 30000,
  ) {
    this.delay = min;
    document.addEventListener('visibilitychange', this.onVisibility);
  }

  /** Runs a tick now and keeps polling. */
  start(): void {
    this.schedule(0);
  }

  /** Polls at the fastest pace again (after an action). */
  hurry(): void {
    this.halted = false;
    this.delay = this.min;
    this.schedule(0);
  }

  /** Stops for good (the view was left). */
  stop(): void {
    this.stopped = true;
    this.clear();
    document.removeEventListener('visibilitychange', this.onVisibility);
  }

  private clear(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(ms: number): void {
    this.clear();
    if (this.stopped || document.hidden) return;
    this.timer = window.setTimeout(() => void this.run(), ms);
  }

  private async run(): Promise<void> {
    if (this.running || this.stopped) return;
    this.running = true;
    try {
      const changed = await this.tick();
      this.delay = changed ? this.min : Math.min(this.max, Math.round(this.delay * 1.5));
    } catch (error) {
      this.delay = Math.min(this.max, this.delay * 2);
      if (error instanceof ApiError && !error.retryable) this.halted = true;
    } finally {
      this.running = false;
    }
    if (!this.halted) this.schedule(this.delay);
  }
}
