/**
 * Local mode's follower of apps on AWS-backed schedulers. The deployed stack learns of Batch and SageMaker
 * state changes from EventBridge within seconds; local mode has no EventBridge, so without this only the
 * minute reconciler would move such apps. The follower runs the reconciler's own pass (one batched describe
 * per page of non-terminal apps, each result applied through the same transition path) for those schedulers
 * every couple of seconds. A pass over a scheduler without live apps is one read of the store and no AWS
 * call. After a pass with errors (no credentials, throttling) the follower waits longer, up to a minute.
 *
 * @module
 */

/** What one pass of the reconciler over one scheduler did. */
export interface FollowedPass {
  checked: number;
  changed: number;
  errors: number;
}

/** Options of {@link startFollower}. */
export interface FollowerOptions {
  /** The schedulers to follow. */
  schedulers: readonly string[];
  /** The reconciler's pass over one scheduler's non-terminal apps (`Runner.reconcile`). */
  reconcile: (scheduler: string) => Promise<FollowedPass>;
  /** Between passes (ms). */
  intervalMs: number;
  /** Longest wait between passes after errors (ms); default 60 s. */
  maxIntervalMs?: number;
  /** Told of a pass that failed as a whole. */
  onError?: (error: unknown) => void;
}

/** A running follower. */
export interface Follower {
  /** Stops after the pass under way, if any. */
  stop(): Promise<void>;
}

/** The schedulers local mode follows: those whose state changes reach the deployed stack as events. */
export const FOLLOWED_SCHEDULERS: readonly string[] = ['aws_batch', 'aws_sagemaker'];

/**
 * Starts following: a pass over every scheduler of `options.schedulers`, then the next one `intervalMs`
 * after it ended (doubling after a pass with errors, back to `intervalMs` after one without).
 *
 * @example
 * ```ts
 * const follower = startFollower({ schedulers: ['aws_batch'], reconcile: (s) => runner.reconcile(s), intervalMs: 2000 });
 * await follower.stop();
 * ```
 */
export function startFollower(options: FollowerOptions): Follower {
  const maxIntervalMs = Math.max(options.intervalMs, options.maxIntervalMs ?? 60_000);
  let delay = options.intervalMs;
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let pass: Promise<void> = Promise.resolve();

  const runPass = async (): Promise<void> => {
    let errors = 0;
    for (const scheduler of options.schedulers) {
      if (stopped) return;
      try {
        errors += (await options.reconcile(scheduler)).errors;
      } catch (error) {
        errors += 1;
        options.onError?.(error);
      }
    }
    delay = errors > 0 ? Math.min(maxIntervalMs, delay * 2) : options.intervalMs;
  };
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      pass = runPass().finally(schedule);
    }, delay);
    timer.unref?.();
  };
  schedule();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await pass;
    },
  };
}
