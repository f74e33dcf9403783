/**
 * A server process's browser sessions: bound to the process, ended by time, idleness, logout or crowding,
 * and given a new value periodically. The clock is vitest's fake `Date` (only `Date`: nothing else waits).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BrowserSessions, SESSION_LIFETIMES } from '../../../lib/loopback/browser-sessions.js';

const MINUTE = 60_000;

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'], now: new Date('2026-11-27T00:00:00Z') });
});
afterEach(() => {
  vi.useRealTimers();
});

const later = (ms: number) => vi.setSystemTime(Date.now() + ms);

describe('BrowserSessions', () => {
  it('admits a value it opened, with Max-Age the whole lifetime, and refuses forged values', () => {
    const sessions = new BrowserSessions();
    const opened = sessions.open();
    expect(opened.maxAgeSeconds).toBe(SESSION_LIFETIMES.maxAgeMs / 1000);
    expect(sessions.check(opened.value)).toEqual({ admitted: true });
    const [instance, id] = opened.value.split('.');
    for (const forged of ['', 'x', `${instance}.${id}.wrong`, `${opened.value}.more`, `${instance}..`]) {
      expect(sessions.check(forged).admitted, forged).toBe(false);
    }
  });

  it('refuses a value another process minted, even one that named the same session', () => {
    const first = new BrowserSessions();
    const second = new BrowserSessions();
    const value = first.open().value;
    second.open();
    expect(second.check(value)).toMatchObject({
      admitted: false,
      reason: expect.stringContaining('another'),
    });
    // The same id and secret under the second process's instance id is not a session of it either.
    const [, id, secret] = value.split('.');
    expect(second.check(`${second.instance}.${id}.${secret}`).admitted).toBe(false);
  });

  it('ends a session at its absolute lifetime even when it was used all along', () => {
    const sessions = new BrowserSessions();
    let value = sessions.open().value;
    const step = 30 * MINUTE;
    for (let t = step; t < SESSION_LIFETIMES.maxAgeMs; t += step) {
      later(step);
      const checked = sessions.check(value);
      expect(checked.admitted).toBe(true);
      if (checked.admitted && checked.renewed) {
        // Renewal never extends the lifetime: Max-Age counts down to the same end.
        expect(checked.renewed.maxAgeSeconds).toBe((SESSION_LIFETIMES.maxAgeMs - t) / 1000);
        value = checked.renewed.value;
      }
    }
    later(step);
    expect(sessions.check(value)).toMatchObject({ admitted: false, reason: 'the session has expired' });
  });

  it('ends a session left idle for the idle time', () => {
    const sessions = new BrowserSessions();
    const value = sessions.open().value;
    later(SESSION_LIFETIMES.idleMs - 1);
    expect(sessions.check(value).admitted).toBe(true);
    later(SESSION_LIFETIMES.idleMs);
    expect(sessions.check(value).admitted).toBe(false);
  });

  it('replaces the value on the first request after the rotation time; the old one works only during the grace', () => {
    const sessions = new BrowserSessions();
    const old = sessions.open().value;
    later(SESSION_LIFETIMES.rotateAfterMs - 1);
    expect(sessions.check(old)).toEqual({ admitted: true });
    later(1);
    const rotated = sessions.check(old);
    if (!rotated.admitted || !rotated.renewed) throw new Error('expected a new value');
    const fresh = rotated.renewed.value;
    expect(fresh).not.toBe(old);
    // Requests already under way with the old value still pass, and are not handed the new one.
    expect(sessions.check(old)).toEqual({ admitted: true });
    later(SESSION_LIFETIMES.graceMs);
    expect(sessions.check(old)).toMatchObject({
      admitted: false,
      reason: expect.stringContaining('replaced'),
    });
    expect(sessions.check(fresh)).toEqual({ admitted: true });
  });

  it('ends a session on logout, and only that one', () => {
    const sessions = new BrowserSessions();
    const mine = sessions.open().value;
    const other = sessions.open().value;
    expect(sessions.end(mine)).toBe(true);
    expect(sessions.check(mine).admitted).toBe(false);
    expect(sessions.end(mine)).toBe(false);
    expect(sessions.check(other).admitted).toBe(true);
  });

  it('keeps at most maxSessions, pushing out the least recently used', () => {
    const sessions = new BrowserSessions({ maxSessions: 3 });
    const values = [sessions.open().value, sessions.open().value, sessions.open().value];
    later(1);
    expect(sessions.check(values[0] ?? '').admitted).toBe(true);
    sessions.open();
    expect(sessions.size).toBe(3);
    expect(sessions.check(values[1] ?? '').admitted).toBe(false);
    expect(sessions.check(values[0] ?? '').admitted).toBe(true);
    expect(sessions.check(values[2] ?? '').admitted).toBe(true);
  });
});
