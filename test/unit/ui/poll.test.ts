// Type-checked with the dashboard (ui/tsconfig.json: DOM types), not the node project.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../../../ui/api.js';
import { Poller } from '../../../ui/poll.js';

// The poller needs only `document` (visibility) and `window.setTimeout`: a minimal stand-in of each.
beforeEach(() => {
  vi.useFakeTimers();
  vi.stubGlobal('document', {
    hidden: false,
    addEventListener: () => undefined,
    removeEventListener: () => undefined,
  });
  vi.stubGlobal('window', { setTimeout });
});
afterEach(() => {
  vi.unstubAllGlobals();
  vi.useRealTimers();
});

async function ticksAfter(error: ApiError, hurry = false): Promise<number> {
  let ticks = 0;
  const poller = new Poller(async () => {
    ticks += 1;
    throw error;
  });
  poller.start();
  await vi.advanceTimersByTimeAsync(120_000);
  if (hurry) {
    poller.hurry();
    await vi.advanceTimersByTimeAsync(0);
  }
  poller.stop();
  return ticks;
}

describe('the dashboard Poller', () => {
  it('stops asking after an error the API marks not retryable (an unknown app), until an action', async () => {
    const unknown = new ApiError(404, 'UnknownApp', 'no such app', [], 'r-1', false);
    expect(await ticksAfter(unknown)).toBe(1);
    expect(await ticksAfter(unknown, true)).toBe(2);
  });

  it('keeps asking, backing off, after an error the API marks retryable or a lost connection', async () => {
    expect(await ticksAfter(new ApiError(503, 'StoreUnavailable', 'busy', [], 'r-2', true))).toBeGreaterThan(
      3,
    );
    expect(await ticksAfter(new ApiError(0, 'NetworkError', 'the server did not answer'))).toBeGreaterThan(3);
  });

  it('judges an answer without the API’s word by its status: a gateway 503 is retried, a 404 is not', () => {
    expect(new ApiError(503, 'HTTP 503', 'Service Unavailable').retryable).toBe(true);
    expect(new ApiError(404, 'HTTP 404', 'Not Found').retryable).toBe(false);
  });
});
