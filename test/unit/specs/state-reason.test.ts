/** StateReason: reason-only updates in the transition rule, since-when kept across repeats, one-line format. */
import { describe, expect, it } from 'vitest';
import {
  type AppStateTransition,
  carryStateReason,
  decideTransition,
  formatAttemptOutcome,
  formatStateReason,
  MAX_REASON_TEXT,
  makeStateReason,
  type StateReason,
  type TransitionPosition,
} from '../../../lib/specs/index.js';

const reason = (text: string, since: string, code?: string): StateReason => ({
  text,
  since,
  source: 'aws_batch',
  ...(code ? { code } : {}),
});
const PENDING: TransitionPosition = { state: 'PENDING', attempt: 0, lastEventTime: 100 };
const next = (stateReason?: StateReason, eventTime = 100): AppStateTransition => ({
  state: 'PENDING',
  attempt: 0,
  eventTime,
  source: 'event',
  ...(stateReason ? { stateReason } : {}),
});

describe('decideTransition with state reasons', () => {
  it('applies a first reason for the same state and event time (a reason-only update)', () => {
    expect(decideTransition(PENDING, next(reason('CAPACITY:X - no capacity', '2026-01-15T12:00:00Z')))).toBe(
      'apply',
    );
  });

  it('takes the same reason again as a duplicate, whatever its time', () => {
    const current = { ...PENDING, stateReason: reason('CAPACITY:X - no capacity', '2026-01-15T12:00:00Z') };
    expect(decideTransition(current, next(reason('CAPACITY:X - no capacity', '2026-01-15T13:00:00Z')))).toBe(
      'duplicate',
    );
  });

  it('applies a newer different reason and turns away an older one', () => {
    const current = { ...PENDING, stateReason: reason('A', '2026-01-15T12:00:00Z') };
    expect(decideTransition(current, next(reason('B', '2026-01-15T12:05:00Z')))).toBe('apply');
    expect(decideTransition(current, next(reason('B', '2026-01-15T11:55:00Z')))).toBe('duplicate');
  });

  it('never lets a reason move a terminal app or an earlier state', () => {
    expect(decideTransition({ ...PENDING, state: 'FAILED' }, next(reason('A', '2026-01-15T12:00:00Z')))).toBe(
      'terminal',
    );
    expect(
      decideTransition({ ...PENDING, state: 'RUNNING' }, next(reason('A', '2026-01-15T12:00:00Z'))),
    ).toBe('stale');
  });
});

describe('carryStateReason', () => {
  it('keeps since-when while the same reason repeats, and takes a new reason’s own', () => {
    const first = reason('Priority', '2026-01-15T12:00:00Z', 'Priority');
    expect(carryStateReason(first, reason('Priority', '2026-01-15T12:40:00Z', 'Priority')).since).toBe(
      '2026-01-15T12:00:00Z',
    );
    expect(carryStateReason(first, reason('Resources', '2026-01-15T12:40:00Z', 'Resources')).since).toBe(
      '2026-01-15T12:40:00Z',
    );
  });
});

describe('makeStateReason', () => {
  it('gives none for empty text and cuts over-long text', () => {
    expect(makeStateReason('slurm', '  ', 0)).toBeUndefined();
    expect(makeStateReason('slurm', 'x'.repeat(5000), 0)?.text).toHaveLength(MAX_REASON_TEXT);
  });
});

describe('formatStateReason and formatAttemptOutcome', () => {
  it('reads as one line: how long, then the scheduler’s words, the code added only when the text lacks it', () => {
    const age = (ms: number) => `${ms / 60_000}m`;
    const now = Date.parse('2026-01-15T12:40:00Z');
    expect(
      formatStateReason(reason('CAPACITY:X - none', '2026-01-15T12:00:00Z', 'CAPACITY:X'), now, age),
    ).toBe('for 40m: CAPACITY:X - none');
    expect(
      formatStateReason(
        reason('Launching requested ML instances', '2026-01-15T12:30:00Z', 'Starting'),
        now,
        age,
      ),
    ).toBe('for 10m: Starting: Launching requested ML instances');
    expect(formatAttemptOutcome({ attempt: 3 })).toBe('attempt 3: ended');
  });
});
