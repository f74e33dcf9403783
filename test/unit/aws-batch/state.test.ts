import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  BATCH_JOB_STATE,
  type BatchJobLike,
  batchConsoleUrl,
  batchNumRestarts,
  batchReasonOf,
  batchStateOf,
  batchTransitionOf,
  CANCEL_REASON_PREFIX,
  isBatchNodeJob,
  parseEpochMs,
} from '../../../lib/schedulers/aws-batch/index.js';
import { decideTransition, type TransitionPosition } from '../../../lib/specs/index.js';

function eventDetail(name: string): BatchJobLike {
  const url = new URL(`../../fixtures/aws-batch/events/${name}.json`, import.meta.url);
  return (JSON.parse(readFileSync(url, 'utf8')) as { detail: BatchJobLike }).detail;
}

describe('Batch state mapping', () => {
  describe('BATCH_JOB_STATE', () => {
    it("maps every Batch status as TorchX's JOB_STATE does", () => {
      expect(BATCH_JOB_STATE).toEqual({
        SUBMITTED: 'PENDING',
        PENDING: 'PENDING',
        RUNNABLE: 'PENDING',
        STARTING: 'PENDING',
        RUNNING: 'RUNNING',
        SUCCEEDED: 'SUCCEEDED',
        FAILED: 'FAILED',
      });
    });
  });

  describe('batchStateOf', () => {
    it.each([
      ['batch-single-submitted', 'PENDING'],
      ['batch-single-pending', 'PENDING'],
      ['batch-single-runnable', 'PENDING'],
      ['batch-single-starting', 'PENDING'],
      ['batch-single-running', 'RUNNING'],
      ['batch-single-succeeded', 'SUCCEEDED'],
      ['batch-single-failed', 'FAILED'],
      ['batch-single-failed-cancelled', 'CANCELLED'],
      ['batch-single-failed-terminated', 'CANCELLED'],
      ['batch-single-runnable-after-retry', 'PENDING'],
      ['batch-mnp-running', 'RUNNING'],
      ['batch-mnp-succeeded', 'SUCCEEDED'],
      ['batch-mnp-failed', 'FAILED'],
      ['batch-doc-example-runnable', 'PENDING'],
    ])('maps the %s event detail to %s', (fixture, state) => {
      expect(batchStateOf(eventDetail(fixture))).toBe(state);
    });

    it('reports CANCELLED for a FAILED job whose statusReason is the one torchx-serverless writes on cancel', () => {
      expect(batchStateOf({ status: 'FAILED', statusReason: `${CANCEL_REASON_PREFIX}user asked` })).toBe(
        'CANCELLED',
      );
    });

    it('keeps FAILED for a job Batch terminated because its attempt timed out', () => {
      expect(
        batchStateOf({
          status: 'FAILED',
          isTerminated: true,
          statusReason: 'Job attempt duration exceeded timeout',
        }),
      ).toBe('FAILED');
    });

    it('gives UNKNOWN for a status the service model does not have', () => {
      expect(batchStateOf({ status: 'HIBERNATING' })).toBe('UNKNOWN');
      expect(batchStateOf({})).toBe('UNKNOWN');
    });
  });

  describe('parseEpochMs', () => {
    it('accepts numbers, numeric strings and ISO-8601 strings', () => {
      expect(parseEpochMs(1735732800000)).toBe(1735732800000);
      expect(parseEpochMs('1735732800000')).toBe(1735732800000);
      expect(parseEpochMs('1592411992203.0')).toBe(1592411992203);
      expect(parseEpochMs('2025-01-01T12:00:00Z')).toBe(1735732800000);
    });

    it('rejects anything else', () => {
      expect(parseEpochMs(undefined)).toBeUndefined();
      expect(parseEpochMs('')).toBeUndefined();
      expect(parseEpochMs('soon')).toBeUndefined();
      expect(parseEpochMs(Number.NaN)).toBeUndefined();
      expect(parseEpochMs({})).toBeUndefined();
    });
  });

  describe('batchTransitionOf', () => {
    it('reads a RUNNING multi-node parent event', () => {
      expect(batchTransitionOf(eventDetail('batch-mnp-running'), 'event')).toEqual({
        state: 'RUNNING',
        eventTime: 1735733218000,
        attempt: 0,
        source: 'event',
        numRestarts: 0,
        uiUrl:
          'https://us-east-1.console.aws.amazon.com/batch/home?region=us-east-1#jobs/mnp-job/7b3e1c5a-9d2f-4a8b-b6c4-2e1f0d9c8b7a',
      });
    });

    it('reads a failed job with two attempts: stoppedAt, attempts, restarts, exit code in the reason', () => {
      expect(batchTransitionOf(eventDetail('batch-single-failed'), 'event')).toEqual({
        state: 'FAILED',
        eventTime: 1735735200000,
        attempt: 2,
        source: 'event',
        numRestarts: 1,
        reason: 'Essential container in task exited; exit code 1',
        stateReason: {
          text: 'Essential container in task exited; exit code 1',
          since: '2025-01-01T12:40:00.000Z',
          source: 'aws_batch',
        },
        attemptOutcomes: [
          {
            attempt: 1,
            exitCode: 137,
            reason:
              'Essential container in task exited; OutOfMemoryError: Container killed due to memory usage',
            startedAt: '2025-01-01T12:02:18.000Z',
            stoppedAt: '2025-01-01T12:32:18.000Z',
          },
          {
            attempt: 2,
            exitCode: 1,
            reason: 'Essential container in task exited',
            startedAt: '2025-01-01T12:35:00.000Z',
            stoppedAt: '2025-01-01T12:40:00.000Z',
          },
        ],
        uiUrl:
          'https://us-east-1.console.aws.amazon.com/batch/home?region=us-east-1#jobs/mnp-job/5f0d9a3e-2b7c-4e1a-9c4d-8a6b2f1e7d30',
      });
    });

    it('counts the failed attempt of a job back in RUNNABLE as a restart and orders it after RUNNING', () => {
      const running = batchTransitionOf(eventDetail('batch-single-running'), 'event');
      const retried = batchTransitionOf(eventDetail('batch-single-runnable-after-retry'), 'event');
      expect(retried.state).toBe('PENDING');
      expect(retried.attempt).toBe(1);
      expect(retried.numRestarts).toBe(1);
      expect(
        decideTransition(
          { state: running.state, attempt: running.attempt, lastEventTime: running.eventTime },
          retried,
        ),
      ).toBe('apply');
    });

    it('carries the cancel reason of a cancelled job', () => {
      const t = batchTransitionOf(eventDetail('batch-single-failed-cancelled'), 'event');
      expect(t.state).toBe('CANCELLED');
      expect(t.reason).toBe('Cancelled by control plane: user request');
      expect(t.eventTime).toBe(1735732800000);
    });

    it('accepts string timestamps and prefers stoppedAt over startedAt over createdAt', () => {
      expect(
        batchTransitionOf({ status: 'RUNNABLE', createdAt: '1000', attempts: [] }, 'describe').eventTime,
      ).toBe(1000);
      expect(
        batchTransitionOf({ status: 'RUNNING', createdAt: '1000', startedAt: '2000' }, 'describe').eventTime,
      ).toBe(2000);
      expect(
        batchTransitionOf(
          { status: 'SUCCEEDED', createdAt: 1000, startedAt: 2000, stoppedAt: '2025-01-01T12:00:00Z' },
          'describe',
        ).eventTime,
      ).toBe(1735732800000);
      expect(batchTransitionOf({ status: 'RUNNABLE' }, 'describe').eventTime).toBe(0);
    });

    it('orders the events of a job lifecycle forward and ignores replays', () => {
      const names = [
        'batch-single-runnable',
        'batch-single-starting',
        'batch-single-running',
        'batch-single-runnable-after-retry',
        'batch-single-failed',
      ];
      let position: TransitionPosition = { state: 'SUBMITTED', attempt: 0, lastEventTime: 0 };
      const decisions: string[] = [];
      for (const name of names) {
        const t = batchTransitionOf(eventDetail(name), 'event');
        const decision = decideTransition(position, t);
        decisions.push(decision);
        if (decision === 'apply') {
          position = { state: t.state, attempt: t.attempt, lastEventTime: t.eventTime };
          if (t.stateReason !== undefined) position.stateReason = t.stateReason;
        }
      }
      expect(decisions).toEqual(['apply', 'duplicate', 'apply', 'apply', 'apply']);
      expect(
        decideTransition(position, batchTransitionOf(eventDetail('batch-single-running'), 'event')),
      ).toBe('terminal');
    });
  });

  describe('batchNumRestarts and batchReasonOf', () => {
    it('does not count the last attempt of a finished job as a restart', () => {
      expect(batchNumRestarts({ status: 'SUCCEEDED', attempts: [{}] })).toBe(0);
      expect(batchNumRestarts({ status: 'RUNNING', attempts: [{}] })).toBe(1);
      expect(batchNumRestarts({ status: 'FAILED', attempts: [] })).toBe(0);
    });

    it('adds the container reason of a failed job and says nothing when Batch said nothing', () => {
      expect(
        batchReasonOf({
          status: 'FAILED',
          statusReason: 'Essential container in task exited',
          attempts: [{ container: { exitCode: 137, reason: 'OutOfMemoryError: Container killed' } }],
        }),
      ).toBe('Essential container in task exited; exit code 137; OutOfMemoryError: Container killed');
      expect(batchReasonOf({ status: 'RUNNING' })).toBeUndefined();
    });
  });

  describe('batchConsoleUrl', () => {
    it.each([
      [
        'arn:aws:batch:us-west-2:123456789012:job/abc-123',
        'https://us-west-2.console.aws.amazon.com/batch/home?region=us-west-2#jobs/mnp-job/abc-123',
      ],
      [
        'arn:aws-cn:batch:cn-north-1:123456789012:job/abc-123',
        'https://cn-north-1.console.amazonaws.cn/batch/home?region=cn-north-1#jobs/mnp-job/abc-123',
      ],
      [
        'arn:aws-us-gov:batch:us-gov-west-1:123456789012:job/abc-123',
        'https://us-gov-west-1.console.amazonaws-us-gov.com/batch/home?region=us-gov-west-1#jobs/mnp-job/abc-123',
      ],
      [
        'arn:aws:batch:us-east-1:123456789012:job/abc-123#1',
        'https://us-east-1.console.aws.amazon.com/batch/home?region=us-east-1#jobs/mnp-job/abc-123',
      ],
    ])('links %s to its console page', (arn, url) => {
      expect(batchConsoleUrl(arn)).toBe(url);
    });

    it('gives nothing for a non-job ARN or no ARN', () => {
      expect(batchConsoleUrl('arn:aws:batch:us-east-1:123456789012:job-queue/q')).toBeUndefined();
      expect(batchConsoleUrl(undefined)).toBeUndefined();
    });
  });

  describe('isBatchNodeJob', () => {
    it('tells node jobs from their parent', () => {
      expect(isBatchNodeJob(eventDetail('batch-mnp-node0-running'))).toBe(true);
      expect(isBatchNodeJob(eventDetail('batch-mnp-running'))).toBe(false);
    });
  });
});
