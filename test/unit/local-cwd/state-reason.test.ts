/** local_cwd state reasons: only what the local scheduler really waits for, and why an app ended. */
import { describe, expect, it } from 'vitest';
import { localStateReasonOf } from '../../../lib/schedulers/local-cwd/live-app.js';

const T0 = 1_735_732_800_000;

describe('localStateReasonOf', () => {
  it('says it is starting the replicas while the app is SUBMITTED', () => {
    const record = { state: 'SUBMITTED' as const, replicas: [{}, {}], createdAt: T0, updatedAt: T0 };
    expect(localStateReasonOf(record as never, undefined)).toEqual({
      text: 'starting 2 replicas',
      since: new Date(T0).toISOString(),
      source: 'local_cwd',
    });
  });

  it('says nothing while the app runs: it waits for nothing', () => {
    const record = { state: 'RUNNING' as const, replicas: [{}], createdAt: T0, updatedAt: T0 + 5 };
    expect(localStateReasonOf(record as never, undefined)).toBeUndefined();
  });

  it('gives a finished app’s end reason, holding since it finished', () => {
    const record = {
      state: 'FAILED' as const,
      replicas: [{}],
      createdAt: T0,
      updatedAt: T0 + 9,
      finishedAt: T0 + 7,
    };
    expect(localStateReasonOf(record as never, 'worker[0] exited with code 3')).toEqual({
      text: 'worker[0] exited with code 3',
      since: new Date(T0 + 7).toISOString(),
      source: 'local_cwd',
    });
  });
});
