import { describe, expect, it } from 'vitest';
import {
  type AppRecord,
  type AppStateTransition,
  applyTransition,
  decideTransition,
  HISTORY_HEAD,
  MAX_HISTORY,
  makeAppDef,
} from '../../../lib/specs/index.js';

const t = (state: AppStateTransition['state'], attempt: number, eventTime: number): AppStateTransition => ({
  state,
  attempt,
  eventTime,
  source: 'event',
});

describe('decideTransition', () => {
  it('applies a higher state rank at the same attempt', () => {
    expect(decideTransition({ state: 'PENDING', attempt: 0, lastEventTime: 5 }, t('RUNNING', 0, 1))).toBe(
      'apply',
    );
  });

  it('treats a Batch retry (RUNNING → PENDING with one more attempt) as forward', () => {
    expect(decideTransition({ state: 'RUNNING', attempt: 0, lastEventTime: 10 }, t('PENDING', 1, 20))).toBe(
      'apply',
    );
  });

  it('rejects a lower rank at the same attempt as stale, even if later', () => {
    expect(decideTransition({ state: 'RUNNING', attempt: 1, lastEventTime: 10 }, t('PENDING', 1, 20))).toBe(
      'stale',
    );
  });

  it('rejects an older attempt', () => {
    expect(decideTransition({ state: 'PENDING', attempt: 2, lastEventTime: 10 }, t('RUNNING', 1, 30))).toBe(
      'stale',
    );
  });

  it('applies a later event at the same state (fresher details) and spots exact duplicates', () => {
    const current = { state: 'RUNNING' as const, attempt: 0, lastEventTime: 10 };
    expect(decideTransition(current, t('RUNNING', 0, 11))).toBe('apply');
    expect(decideTransition(current, t('RUNNING', 0, 10))).toBe('duplicate');
    expect(decideTransition(current, t('RUNNING', 0, 9))).toBe('stale');
  });

  it('never leaves a terminal state', () => {
    expect(decideTransition({ state: 'FAILED', attempt: 0, lastEventTime: 1 }, t('RUNNING', 5, 99))).toBe(
      'terminal',
    );
    expect(decideTransition({ state: 'SUCCEEDED', attempt: 0, lastEventTime: 1 }, t('CANCELLED', 0, 2))).toBe(
      'terminal',
    );
  });

  it('lets anything override UNKNOWN', () => {
    expect(decideTransition({ state: 'UNKNOWN', attempt: 0, lastEventTime: 1 }, t('UNSUBMITTED', 0, 1))).toBe(
      'apply',
    );
  });
});

describe('applyTransition', () => {
  const base: AppRecord = {
    handle: 'fake://s/q:a',
    scheduler: 'fake',
    session: 's',
    appId: 'q:a',
    nativeName: 'a',
    owner: 'me',
    name: 'a',
    app: makeAppDef({ name: 'a' }),
    cfg: {},
    state: 'SUBMITTED',
    numRestarts: 0,
    roles: [],
    attempt: 0,
    lastEventTime: 1,
    createdAt: 1,
    updatedAt: 1,
    history: [],
  };

  it('records state changes in history with the reason', () => {
    const next = applyTransition(base, { ...t('FAILED', 0, 5), reason: 'exit 1' }, 6);
    expect(next).toMatchObject({ state: 'FAILED', reason: 'exit 1', lastEventTime: 5, updatedAt: 6 });
    expect(next.history).toEqual([
      { from: 'SUBMITTED', to: 'FAILED', time: 5, source: 'event', reason: 'exit 1' },
    ]);
    expect(base.history).toEqual([]);
  });

  it('does not add history for a detail-only update and keeps at most MAX_HISTORY entries', () => {
    let record = base;
    for (let i = 0; i < MAX_HISTORY + 10; i++) {
      record = applyTransition(record, t(i % 2 === 0 ? 'PENDING' : 'RUNNING', i, i + 2), i + 2);
    }
    expect(record.history).toHaveLength(MAX_HISTORY);
    expect(applyTransition(record, t(record.state, record.attempt, 1000), 1000).history).toHaveLength(
      MAX_HISTORY,
    );
    expect(record.history.at(-1)?.to).toBe(record.state);
  });

  it('keeps the first HISTORY_HEAD and the newest entries, counting the ones dropped in between', () => {
    let record = base;
    const total = MAX_HISTORY + 10;
    for (let i = 0; i < total; i++) {
      record = applyTransition(record, t(i % 2 === 0 ? 'PENDING' : 'RUNNING', i, i + 2), i + 2);
    }
    expect(record.history.slice(0, HISTORY_HEAD).map((h) => h.time)).toEqual([2, 3, 4, 5, 6]);
    expect(record.history.at(-1)?.time).toBe(total + 1);
    expect(record.history[HISTORY_HEAD]?.time).toBe(2 + HISTORY_HEAD + (total - MAX_HISTORY));
    expect(record.historyElided).toBe(total - MAX_HISTORY);
  });
});
