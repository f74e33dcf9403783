import { describe, expect, it } from 'vitest';
import type { AppResponse } from '../../../lib/specs/api.js';
import { stuckHint } from '../../../ui/hints.js';

function app(scheduler: string, state: string, msg: string, replicaReason?: string): AppResponse {
  return {
    handle: `${scheduler}://torchx/q:job`,
    scheduler,
    session: 'torchx',
    appId: 'q:job',
    name: 'job',
    createdAt: '2026-11-23T20:00:00.000Z',
    status: {
      state,
      numRestarts: 0,
      msg,
      structuredErrorMsg: '',
      roles: [
        {
          role: 'trainer',
          replicas: [
            {
              id: 0,
              state,
              role: 'trainer',
              hostname: '',
              structuredErrorMsg: '',
              ...(replicaReason ? { reason: replicaReason } : {}),
            },
          ],
        },
      ],
    },
    app: { name: 'job', roles: [] },
  } as unknown as AppResponse;
}

describe('stuckHint (the dashboard’s stuck-job hint)', () => {
  it('explains Batch’s resource misconfiguration in plain words and says what to check', () => {
    const hint = stuckHint(
      app(
        'aws_batch',
        'PENDING',
        '',
        'MISCONFIGURATION:JOB_RESOURCE_REQUIREMENT - The job resource requirement (vCPU/memory/GPU) is higher than that can be met by the CE(s) attached to the job queue.',
      ),
    );
    expect(hint?.say).toMatch(/No compute environment .* big enough/);
    expect(hint?.check).toMatch(/max vCPUs/);
    expect(hint?.reason).toContain('MISCONFIGURATION:JOB_RESOURCE_REQUIREMENT');
  });

  it('reads the state reason first: a Kubernetes pod without a GPU node is a capacity problem', () => {
    const pending = app('kubernetes', 'PENDING', '');
    pending.status.stateReason = {
      text: '0/3 nodes are available: 3 Insufficient nvidia.com/gpu.',
      code: 'Unschedulable',
      since: '2026-11-23T20:00:00.000Z',
      source: 'kubernetes',
    };
    const hint = stuckHint(pending);
    expect(hint?.reason).toBe('0/3 nodes are available: 3 Insufficient nvidia.com/gpu.');
    expect(hint?.say).toMatch(/capacity/);
  });

  it('names capacity and quota problems', () => {
    expect(stuckHint(app('aws_sagemaker', 'PENDING', 'ResourceLimitExceeded: quota'))?.say).toMatch(
      /capacity/,
    );
  });

  it('quotes an unknown reason and points at the scheduler’s console', () => {
    const hint = stuckHint(app('aws_batch', 'SUBMITTED', 'waiting for something new'));
    expect(hint?.say).toBe('The scheduler says: waiting for something new');
    expect(hint?.check).toMatch(/AWS Batch console/);
  });

  it('gives no hint for an app that runs or has finished', () => {
    expect(stuckHint(app('aws_batch', 'RUNNING', ''))).toBeUndefined();
    expect(stuckHint(app('aws_batch', 'FAILED', 'no compute environment'))).toBeUndefined();
  });
});
