import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startFollower } from '../../../lib/local/follower.js';

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('startFollower', () => {
  it('runs the reconciler pass for every followed scheduler, each interval', async () => {
    const passes: string[] = [];
    const follower = startFollower({
      schedulers: ['aws_batch', 'aws_sagemaker'],
      reconcile: async (scheduler) => {
        passes.push(scheduler);
        return { checked: 1, changed: 1, errors: 0 };
      },
      intervalMs: 2_000,
    });
    await vi.advanceTimersByTimeAsync(2_000);
    expect(passes).toEqual(['aws_batch', 'aws_sagemaker']);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(passes).toHaveLength(4);
    await follower.stop();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(passes).toHaveLength(4);
  });

  it('waits twice as long after a pass with errors, up to the limit, and back to the interval after one without', async () => {
    let failing = true;
    const at: number[] = [];
    const follower = startFollower({
      schedulers: ['aws_batch'],
      reconcile: async () => {
        at.push(Date.now());
        if (failing) throw new Error('no credentials');
        return { checked: 0, changed: 0, errors: 0 };
      },
      intervalMs: 1_000,
      maxIntervalMs: 4_000,
      onError: () => undefined,
    });
    const start = Date.now();
    await vi.advanceTimersByTimeAsync(1_000 + 2_000 + 4_000 + 4_000);
    expect(at.map((t) => t - start)).toEqual([1_000, 3_000, 7_000, 11_000]);
    failing = false;
    await vi.advanceTimersByTimeAsync(4_000 + 1_000);
    expect(at.map((t) => t - start).slice(4)).toEqual([15_000, 16_000]);
    await follower.stop();
  });
});
