/** TorchX's SLURM_STATES table, wait-status decoding, and the describe mapping of heterogeneous components. */
import { describe, expect, it } from 'vitest';
import {
  appStateFromSlurm,
  decodeWaitStatus,
  describeSlurmJob,
  parseReplicaName,
  SLURM_STATES,
  type SlurmJob,
} from '../../../lib/schedulers/slurm/index.js';
import { response } from './helpers.js';

describe('SLURM_STATES', () => {
  it("is TorchX's table", () => {
    expect(SLURM_STATES).toEqual({
      BOOT_FAIL: 'FAILED',
      CANCELLED: 'CANCELLED',
      COMPLETED: 'SUCCEEDED',
      DEADLINE: 'FAILED',
      FAILED: 'FAILED',
      NODE_FAIL: 'FAILED',
      OUT_OF_MEMORY: 'FAILED',
      PENDING: 'PENDING',
      PREEMPTED: 'FAILED',
      RUNNING: 'RUNNING',
      REQUEUED: 'PENDING',
      RESIZING: 'PENDING',
      REVOKED: 'FAILED',
      SUSPENDED: 'PENDING',
      TIMEOUT: 'FAILED',
    });
  });

  it('maps unlisted states to UNKNOWN and reads the first entry of a state list (Slurm >= 23.11)', () => {
    expect(appStateFromSlurm('COMPLETING')).toBe('UNKNOWN');
    expect(appStateFromSlurm('constructor')).toBe('UNKNOWN');
    expect(appStateFromSlurm(undefined)).toBe('UNKNOWN');
    expect(appStateFromSlurm(['RUNNING', 'COMPLETING'])).toBe('RUNNING');
  });
});

describe('decodeWaitStatus', () => {
  it('decodes exit codes and signals from a raw wait status', () => {
    expect(decodeWaitStatus(0)).toEqual({ exitCode: 0 });
    expect(decodeWaitStatus(768)).toEqual({ exitCode: 3 });
    expect(decodeWaitStatus(256 * 255)).toEqual({ exitCode: 255 });
    expect(decodeWaitStatus(9)).toEqual({ exitCode: 137, signal: 9 });
    expect(decodeWaitStatus(15)).toEqual({ exitCode: 143, signal: 15 });
  });
});

describe('describeSlurmJob', () => {
  const jobs = (response('job-hetjob-failed') as { jobs: SlurmJob[] }).jobs;

  it('parses <role>-<replica> names as TorchX does (rpartition) and ignores others', () => {
    expect(parseReplicaName('trainer-ps-3')).toEqual(['trainer-ps', 3]);
    expect(parseReplicaName('noreplica')).toBeUndefined();
    expect(parseReplicaName('-1')).toBeUndefined();
    expect(parseReplicaName('a-x')).toBeUndefined();
  });

  it("gives one role per component name, the leader's state and exit code, and each replica's own exit code", () => {
    const desc = describeSlurmJob('app-1', [...jobs].reverse());
    expect(desc.state).toBe('FAILED');
    expect(desc.msg).toBe('slurm job 1: FAILED (NonZeroExitCode), exit code 3');
    expect(desc.metadata.slurm_job_id).toBe('1');
    expect(desc.rolesStatuses).toEqual([
      {
        role: 'a',
        replicas: [
          {
            id: 0,
            role: 'a',
            state: 'FAILED',
            hostname: 'n1',
            structuredErrorMsg: '<NONE>',
            exitCode: 0,
            reason: 'NonZeroExitCode',
          },
        ],
      },
      {
        role: 'b',
        replicas: [
          {
            id: 0,
            role: 'b',
            state: 'FAILED',
            hostname: 'n2',
            structuredErrorMsg: '<NONE>',
            exitCode: 3,
            reason: 'NonZeroExitCode',
          },
        ],
      },
    ]);
    expect(desc.roles.map((r) => [r.name, r.numReplicas])).toEqual([
      ['a', 1],
      ['b', 1],
    ]);
  });

  it('reports a killed job by its signal and no exit codes while running', () => {
    const [first] = jobs;
    if (!first) throw new Error('fixture has no job');
    const killed = describeSlurmJob('app', [{ ...first, het_job_id: 0, exit_code: 9 }]);
    expect(killed.msg).toContain('killed by signal 9');
    const running = describeSlurmJob('app', [{ ...first, job_state: 'RUNNING', state_reason: 'None' }]);
    expect(running.state).toBe('RUNNING');
    expect(running.msg).toBe('slurm job 1: RUNNING');
    expect(running.rolesStatuses[0]?.replicas[0]?.exitCode).toBeUndefined();
    // a running job's end_time is a forecast: the state changed when it started
    const timed = { ...first, job_state: 'RUNNING', submit_time: 100, start_time: 200, end_time: 9_999 };
    expect(describeSlurmJob('app', [timed]).updatedAt).toBe(200_000);
    expect(describeSlurmJob('app', [{ ...timed, job_state: 'PENDING' }]).updatedAt).toBe(100_000);
    expect(describeSlurmJob('app', [{ ...timed, job_state: 'COMPLETED' }]).updatedAt).toBe(9_999_000);
  });
});
