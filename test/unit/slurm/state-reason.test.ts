/** Slurm state reasons: the leader's state_reason, from slurmrestd's job records. */
import { describe, expect, it } from 'vitest';
import { describeSlurmJob, type SlurmJob } from '../../../lib/schedulers/slurm/describe.js';
import { response } from './helpers.js';

/** The recorded het job's components (slurmrestd 22.05, v0.0.38), with `overrides` on every component. */
function components(overrides: Partial<SlurmJob>): SlurmJob[] {
  const { jobs } = response('jobs') as { jobs: SlurmJob[] };
  return jobs.filter((j) => j.het_job_id === 1).map((j) => ({ ...j, ...overrides }));
}

const NOW = 1_795_467_400_000;

describe('describeSlurmJob state reasons', () => {
  it.each(['Priority', 'Resources', 'QOSMaxJobsPerUserLimit'])(
    'reports a PENDING job’s state_reason %s as its code, holding since now',
    (reason) => {
      const desc = describeSlurmJob(
        'tok123',
        components({ job_state: 'PENDING', state_reason: reason }),
        NOW,
      );
      expect(desc.state).toBe('PENDING');
      expect(desc.stateReason).toEqual({
        text: reason,
        code: reason,
        since: new Date(NOW).toISOString(),
        source: 'slurm',
      });
    },
  );

  it('adds state_description to the text when Slurm gives one', () => {
    const desc = describeSlurmJob(
      'tok123',
      components({
        job_state: 'PENDING',
        state_reason: 'Resources',
        state_description: 'waiting for 2 gpu nodes',
      }),
      NOW,
    );
    expect(desc.stateReason?.text).toBe('Resources: waiting for 2 gpu nodes');
  });

  it('holds a failed job’s reason (NonZeroExitCode) since its end_time', () => {
    const desc = describeSlurmJob('tok123', components({}), NOW);
    expect(desc.state).toBe('FAILED');
    expect(desc.stateReason).toMatchObject({
      code: 'NonZeroExitCode',
      since: new Date(1795467312000).toISOString(),
    });
  });

  it('gives no reason when Slurm says None', () => {
    const desc = describeSlurmJob('tok123', components({ job_state: 'RUNNING', state_reason: 'None' }), NOW);
    expect(desc.stateReason).toBeUndefined();
  });
});
