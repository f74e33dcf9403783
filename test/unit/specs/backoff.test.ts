import { describe, expect, it } from 'vitest';
import { backoffDelay, retry } from '../../../lib/specs/index.js';

const policy = { baseMs: 100, capMs: 1_000 };

describe('backoffDelay', () => {
  it('draws below a ceiling that doubles each attempt and stops at the cap', () => {
    const ceilings = [0, 1, 2, 3, 4, 10].map((attempt) => backoffDelay(attempt, policy, () => 0.999_999));
    expect(ceilings).toEqual([99, 199, 399, 799, 999, 999]);
  });

  it('spreads callers over the whole range below the ceiling (full jitter), down to no wait', () => {
    expect(backoffDelay(2, policy, () => 0)).toBe(0);
    expect(backoffDelay(2, policy, () => 0.5)).toBe(200);
  });
});

describe('retry', () => {
  /** A call that fails `failures` times with `error`, then answers 'done'. */
  const flaky = (failures: number, error: unknown = new Error('busy')) => {
    let calls = 0;
    const fn = async () => {
      calls++;
      if (calls <= failures) throw error;
      return 'done';
    };
    return { fn, calls: () => calls };
  };

  it('tries again after each failure, waiting the back-off, until the call succeeds', async () => {
    const waits: number[] = [];
    const call = flaky(2);
    const sleep = async (ms: number) => void waits.push(ms);
    await expect(retry(call.fn, { ...policy, maxAttempts: 3, sleep, random: () => 0.5 })).resolves.toBe(
      'done',
    );
    expect(call.calls()).toBe(3);
    expect(waits).toEqual([50, 100]);
  });

  it('rethrows the last failure once maxAttempts calls failed, without waiting after it', async () => {
    const waits: number[] = [];
    const call = flaky(5, new Error('still busy'));
    const sleep = async (ms: number) => void waits.push(ms);
    await expect(retry(call.fn, { ...policy, maxAttempts: 3, sleep })).rejects.toThrow('still busy');
    expect(call.calls()).toBe(3);
    expect(waits).toHaveLength(2);
  });

  it('rethrows a failure that is not retryable at once', async () => {
    const call = flaky(1, new Error('refused'));
    const isRetryable = (error: unknown) => (error as Error).message !== 'refused';
    await expect(
      retry(call.fn, { ...policy, maxAttempts: 5, isRetryable, sleep: async () => undefined }),
    ).rejects.toThrow('refused');
    expect(call.calls()).toBe(1);
  });
});
