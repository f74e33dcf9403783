import { describe, expect, it } from 'vitest';
import { LocalEventBus } from '../../../lib/local/event-bus.js';
import { DiskFullError, ValidationError } from '../../../lib/specs/index.js';

/** Resolves after pending timers of 1 ms and the deliveries they start. */
const settle = () => new Promise((r) => setTimeout(r, 30));

describe('LocalEventBus', () => {
  it('delivers in order, and delivers again a change refused by a full disk until it lands', async () => {
    const landed: string[] = [];
    const errors: unknown[] = [];
    let diskFull = 2;
    const bus = new LocalEventBus<string>(
      async (event) => {
        if (event === 'b' && diskFull-- > 0) throw new DiskFullError('/data');
        landed.push(event);
      },
      { retryDelayMs: () => 1, onError: (error) => errors.push(error) },
    );
    await Promise.all(['a', 'b', 'c'].map((e) => bus.emit(e)));
    expect(landed).toEqual(['a', 'c']);
    for (let i = 0; i < 10 && !landed.includes('b'); i++) await settle();
    expect(landed).toEqual(['a', 'c', 'b']);
    // The failure is told once, not at every attempt.
    expect(errors).toHaveLength(1);
    bus.close();
  });

  it('does not deliver again a change refused for good (a bad event)', async () => {
    let attempts = 0;
    const bus = new LocalEventBus<string>(
      async () => {
        attempts++;
        throw ValidationError.forField('event', 'bad');
      },
      { retryDelayMs: () => 1, onError: () => undefined },
    );
    await bus.emit('x');
    await settle();
    expect(attempts).toBe(1);
    bus.close();
  });

  it('drops the deliveries not yet due once closed', async () => {
    let attempts = 0;
    const bus = new LocalEventBus<string>(
      async () => {
        attempts++;
        throw new DiskFullError('/data');
      },
      { retryDelayMs: () => 5, onError: () => undefined },
    );
    await bus.emit('x');
    bus.close();
    await settle();
    await bus.idle();
    expect(attempts).toBe(1);
  });
});
