/**
 * Exponential back-off with full jitter and a cap, for every loop that tries again: {@link backoffDelay}
 * says how long to wait, {@link retry} runs a call until it succeeds, gives up, or runs out of attempts.
 *
 * @module
 */

/** How long to wait before the next attempt: see {@link backoffDelay}. */
export interface BackoffPolicy {
  /** Ceiling of the first wait (attempt 0), in ms; each attempt doubles it. */
  readonly baseMs: number;
  /** Most any wait's ceiling grows to, in ms. */
  readonly capMs: number;
}

/** Waits `ms` milliseconds. */
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The wait before retrying after failed attempt `attempt` (0 for the first): a random whole number of ms
 * below `min(capMs, baseMs × 2^attempt)` ("full jitter": callers that failed together spread out).
 *
 * @param random a number in [0, 1) (injectable for tests).
 * @example
 * ```ts
 * backoffDelay(3, { baseMs: 100, capMs: 5_000 }); // 0 … 799
 * ```
 */
export function backoffDelay(
  attempt: number,
  { baseMs, capMs }: BackoffPolicy,
  random: () => number = Math.random,
): number {
  return Math.floor(random() * Math.min(capMs, baseMs * 2 ** attempt));
}

/** Options of {@link retry}. */
export interface RetryOptions extends BackoffPolicy {
  /** Most attempts in all (the first included). */
  readonly maxAttempts: number;
  /** Whether a failure may be tried again (default: every one). */
  readonly isRetryable?: (error: unknown) => boolean;
  /** Injectable wait (default: a timer). */
  readonly sleep?: (ms: number) => Promise<void>;
  /** Injectable randomness of {@link backoffDelay}. */
  readonly random?: () => number;
}

/**
 * Calls `fn` until it resolves, waiting {@link backoffDelay} between attempts. Rethrows the failure that is
 * not retryable or comes on the last attempt.
 *
 * @example
 * ```ts
 * await retry(() => send(request), { maxAttempts: 4, baseMs: 500, capMs: 8_000, isRetryable: isThrottling });
 * ```
 */
export async function retry<T>(fn: (attempt: number) => Promise<T>, options: RetryOptions): Promise<T> {
  const wait = options.sleep ?? sleep;
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn(attempt);
    } catch (error) {
      if (attempt + 1 >= options.maxAttempts || options.isRetryable?.(error) === false) throw error;
      await wait(backoffDelay(attempt, options, options.random));
    }
  }
}
