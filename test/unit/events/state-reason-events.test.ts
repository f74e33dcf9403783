/** State reasons in events: Batch Job Queue Blocked routing, and the published AppState Change event. */
import { readFileSync } from 'node:fs';
import { marshall } from '@aws-sdk/util-dynamodb';
import { describe, expect, it } from 'vitest';
import { mapStateChangeEvent, type StateChangeEnvelope } from '../../../lib/events/index.js';
import { changeEventOf, changeEventOfStreamRecord } from '../../../lib/events/outbox.js';
import { type AppRecord, applyTransition, makeAppDef, type StateReason } from '../../../lib/specs/index.js';

function fixture(name: string): StateChangeEnvelope {
  const url = new URL(`../../fixtures/aws-batch/events/${name}.json`, import.meta.url);
  return JSON.parse(readFileSync(url, 'utf8')) as StateChangeEnvelope;
}

const T0 = 1_735_732_800_000;
const CAPACITY: StateReason = {
  text: 'CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY - Service cannot fulfill the capacity requested for instance type p4d.24xlarge',
  code: 'CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY',
  since: '2025-01-01T12:41:00.000Z',
  source: 'aws_batch',
};

function pendingRecord(): AppRecord {
  return {
    handle: 'aws_batch://torchx/ml-gpu-queue:train-1',
    scheduler: 'aws_batch',
    session: 'torchx',
    appId: 'ml-gpu-queue:train-1',
    nativeName: 'train-1',
    owner: 'alice',
    name: 'train',
    app: makeAppDef({ name: 'train' }),
    cfg: {},
    state: 'PENDING',
    numRestarts: 0,
    roles: [],
    attempt: 0,
    lastEventTime: T0,
    createdAt: T0,
    updatedAt: T0,
    history: [{ from: 'SUBMITTED', to: 'PENDING', time: T0, source: 'event' }],
  };
}

describe('mapStateChangeEvent of a Batch Job Queue Blocked event', () => {
  it('routes the blocking job’s reason to it, and the same reason to the waiting apps of that queue only', () => {
    const routed = mapStateChangeEvent(fixture('batch-queue-blocked'));
    if ('ignored' in routed) throw new Error(routed.ignored);
    expect(routed).toMatchObject({
      scheduler: 'aws_batch',
      nativeName: 'ctl-run-01hzx7k2-train',
      appId: 'ml-gpu-queue:ctl-run-01hzx7k2-train',
      transition: { state: 'PENDING', stateReason: { code: 'CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY' } },
    });
    const blocked = routed.queueBlocked;
    expect(blocked?.stateReason.since).toBe('2025-01-01T12:42:00.000Z');
    expect(blocked?.inQueue('ml-gpu-queue:train-2')).toBe(true);
    expect(blocked?.inQueue('arn:aws:batch:us-east-1:123456789012:job-queue/ml-gpu-queue:train-3')).toBe(
      true,
    );
    expect(blocked?.inQueue('ml-gpu-queue:ctl-run-01hzx7k2-train')).toBe(false);
    expect(blocked?.inQueue('cpu-queue:train-2')).toBe(false);
  });

  it('gives a plain state change no queue-wide reason', () => {
    const routed = mapStateChangeEvent(fixture('batch-single-runnable-capacity'));
    if ('ignored' in routed) throw new Error(routed.ignored);
    expect(routed.queueBlocked).toBeUndefined();
    expect(routed.transition.stateReason?.since).toBe('2025-01-01T12:41:00.000Z');
  });
});

describe('changeEventOf with state reasons', () => {
  it('publishes a change of reason alone, from PENDING to PENDING, carrying the reason', () => {
    const before = pendingRecord();
    const after = applyTransition(
      before,
      { state: 'PENDING', eventTime: T0, attempt: 0, source: 'event', stateReason: CAPACITY },
      T0 + 60_000,
    );
    const event = changeEventOf(before, after, 3);
    expect(event).toMatchObject({
      id: `${before.handle}#3`,
      from: 'PENDING',
      to: 'PENDING',
      stateReason: CAPACITY,
    });
    expect(changeEventOf(after, after, 4)).toBeUndefined();
  });

  it('carries the attempts on a state change, flagging a host termination, from the table stream too', () => {
    const before = pendingRecord();
    const after = applyTransition(
      before,
      {
        state: 'FAILED',
        eventTime: T0 + 9,
        attempt: 1,
        source: 'event',
        attemptOutcomes: [
          { attempt: 1, reason: 'Host EC2 (instance i-0a1b) terminated.', infrastructure: true },
        ],
      },
      T0 + 10,
    );
    const event = changeEventOfStreamRecord({
      eventName: 'MODIFY',
      dynamodb: {
        OldImage: marshall({ ...before, entity: 'App', version: 2 }, { removeUndefinedValues: true }),
        NewImage: marshall({ ...after, entity: 'App', version: 3 }, { removeUndefinedValues: true }),
      },
    });
    expect(event).toMatchObject({
      from: 'PENDING',
      to: 'FAILED',
      attemptOutcomes: [{ infrastructure: true }],
    });
    expect(event?.stateReason).toBeUndefined();
  });
});
