/** The scheduler's reason in `txs status` and in the `--wait` lines. */
import { describe, expect, it } from 'vitest';
import { type AppResponse, formatStatus, TransitionPrinter } from '../../../lib/cli/index.js';
import type { StateReason } from '../../../lib/specs/index.js';

const CAPACITY: StateReason = {
  text: 'CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY - Service cannot fulfill the capacity requested for instance type p4d.24xlarge',
  code: 'CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY',
  since: '2026-01-15T12:00:20.000Z',
  source: 'aws_batch',
};

function app(state: AppResponse['status']['state'], extra: Partial<AppResponse['status']> = {}): AppResponse {
  return {
    handle: 'aws_batch://torchx/gpu:train-1',
    scheduler: 'aws_batch',
    session: 'torchx',
    appId: 'gpu:train-1',
    name: 'train',
    createdAt: '2026-01-15T12:00:00.000Z',
    status: { state, numRestarts: 0, msg: '', structuredErrorMsg: '<NONE>', roles: [], ...extra },
    app: { name: 'train', roles: [] } as unknown as AppResponse['app'],
  };
}

function recorder() {
  let text = '';
  const write = (t: string) => {
    text += t;
  };
  return { stream: { write, isTTY: false }, text: () => text };
}

describe('formatStatus with a state reason', () => {
  it('adds how long the reason has held, in the scheduler’s words, after TorchX’s layout', () => {
    const now = Date.parse('2026-01-15T12:40:20Z');
    const text = formatStatus(app('PENDING', { stateReason: CAPACITY }), undefined, now);
    expect(text).toContain('    UI URL: None\n    ');
    expect(text).toContain(`Reason: for 40m00s: ${CAPACITY.text} (aws_batch)\n`);
  });

  it('marks an attempt the infrastructure ended as not the app’s failure', () => {
    const text = formatStatus(
      app('PENDING', {
        attemptOutcomes: [
          { attempt: 1, reason: 'Host EC2 (instance i-0a1b2c3d4e5f60718) terminated.', infrastructure: true },
          { attempt: 2, exitCode: 137, reason: 'Essential container in task exited; OutOfMemoryError' },
        ],
      }),
    );
    expect(text).toContain(
      "Attempts:\n      attempt 1: Host EC2 (instance i-0a1b2c3d4e5f60718) terminated. (ended by the infrastructure, not the app's failure)\n",
    );
    expect(text).toContain(
      'attempt 2: exit code 137, Essential container in task exited; OutOfMemoryError\n',
    );
    expect(text.match(/not the app's failure/g)).toHaveLength(1);
  });
});

describe('TransitionPrinter with state reasons', () => {
  it('prints each new reason of a waiting app once, with how long it has held', () => {
    const out = recorder();
    let clock = Date.parse('2026-01-15T12:03:12Z');
    const printer = new TransitionPrinter(out.stream, () => clock);
    printer.update(app('PENDING'));
    printer.update(app('PENDING', { stateReason: CAPACITY }));
    clock += 60_000;
    printer.update(app('PENDING', { stateReason: CAPACITY }));
    expect(out.text()).toBe(`   3m12s  PENDING\n   3m12s  PENDING  waiting for 2m52s: ${CAPACITY.text}\n`);
  });

  it('prints no waiting line once the app has finished', () => {
    const out = recorder();
    const printer = new TransitionPrinter(out.stream, () => Date.parse('2026-01-15T12:00:05Z'));
    printer.update(
      app('FAILED', { stateReason: { ...CAPACITY, text: 'Essential container in task exited' } }),
    );
    expect(out.text()).toBe('    5.0s  FAILED\n');
  });
});
