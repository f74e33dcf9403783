/**
 * The local server's periodic work: the reconciler over every non-terminal app (what the deployed stack's
 * schedule runs), and the follower of apps on AWS-backed schedulers (local mode has no EventBridge: this is
 * how their apps learn of their jobs' state changes). Both run in the background and never keep the process
 * alive on their own.
 *
 * @module
 */
import { type FollowedPass, startFollower } from './follower.js';

/** Options of {@link startTimers}. */
export interface TimerOptions {
  /** Reconciler period (ms); 0 disables it. */
  reconcileEveryMs: number;
  /** One reconciler pass over every app. */
  reconcileAll: () => Promise<unknown>;
  /** Follower period (ms); 0 disables it. */
  followEveryMs: number;
  /** The schedulers to follow; none disables the follower. */
  followed: readonly string[];
  /** One follower pass over a scheduler's non-terminal apps. */
  follow: (scheduler: string) => Promise<FollowedPass>;
}

/** Started timers; {@link Timers.stop} ends both (the follower after the pass under way). */
export interface Timers {
  stop(): Promise<void>;
}

/**
 * Starts the reconciler timer and the follower. A failed pass is printed on stderr; the next one still runs.
 *
 * @example
 * ```ts
 * const timers = startTimers({ reconcileEveryMs: 60_000, reconcileAll, followEveryMs: 2_000, followed: ['aws_batch'], follow });
 * await timers.stop();
 * ```
 */
export function startTimers(options: TimerOptions): Timers {
  const timer =
    options.reconcileEveryMs > 0
      ? setInterval(() => {
          options.reconcileAll().catch((error: unknown) => console.error('reconcile failed:', error));
        }, options.reconcileEveryMs)
      : undefined;
  timer?.unref();
  const follower =
    options.followEveryMs > 0 && options.followed.length > 0
      ? startFollower({
          schedulers: options.followed,
          reconcile: options.follow,
          intervalMs: options.followEveryMs,
          onError: (error: unknown) => console.error('following AWS apps failed:', error),
        })
      : undefined;
  return {
    async stop() {
      if (timer) clearInterval(timer);
      await follower?.stop();
    },
  };
}
