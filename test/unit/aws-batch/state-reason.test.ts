/** Batch state reasons: statusReason codes with since-when, and attempts the infrastructure ended. */
import { readFileSync } from 'node:fs';
import { DescribeJobsCommand, ListJobsCommand } from '@aws-sdk/client-batch';
import { describe, expect, it } from 'vitest';
import {
  type BatchJobLike,
  batchAttemptOutcomesOf,
  batchReasonCodeOf,
  batchTransitionOf,
} from '../../../lib/schedulers/aws-batch/index.js';
import { mockedScheduler, parentJob } from './helpers.js';

type Envelope = { time: string; detail: BatchJobLike };

function event(name: string): Envelope {
  const url = new URL(`../../fixtures/aws-batch/events/${name}.json`, import.meta.url);
  return JSON.parse(readFileSync(url, 'utf8')) as Envelope;
}

describe('Batch state reasons', () => {
  describe('batchTransitionOf', () => {
    it('carries a RUNNABLE job’s capacity statusReason with its code, holding since the event’s time', () => {
      const e = event('batch-single-runnable-capacity');
      const t = batchTransitionOf(e.detail, 'event', Date.parse(e.time));
      expect(t.state).toBe('PENDING');
      expect(t.stateReason).toEqual({
        text: 'CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY - Service cannot fulfill the capacity requested for instance type p4d.24xlarge',
        code: 'CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY',
        since: '2025-01-01T12:41:00.000Z',
        source: 'aws_batch',
      });
    });

    it('codes a misconfigured job’s reason MISCONFIGURATION:JOB_RESOURCE_REQUIREMENT', () => {
      const e = event('batch-single-runnable-misconfiguration');
      const t = batchTransitionOf(e.detail, 'event', Date.parse(e.time));
      expect(t.stateReason?.code).toBe('MISCONFIGURATION:JOB_RESOURCE_REQUIREMENT');
      expect(t.stateReason?.since).toBe('2025-01-01T12:35:00.000Z');
    });

    it('gives a waiting job without a statusReason its Batch status as the reason (STARTING replaces capacity)', () => {
      const e = event('batch-single-starting');
      expect(batchTransitionOf(e.detail, 'event', Date.parse(e.time)).stateReason).toEqual({
        text: 'STARTING',
        code: 'STARTING',
        since: new Date(Date.parse(e.time)).toISOString(),
        source: 'aws_batch',
      });
    });

    it('holds a RUNNABLE job’s bare status since it was queued, so it never replaces a later reason', () => {
      const e = event('batch-single-runnable');
      expect(batchTransitionOf(e.detail, 'event', Date.parse(e.time)).stateReason).toMatchObject({
        code: 'RUNNABLE',
        since: new Date(Number(e.detail.createdAt)).toISOString(),
      });
    });

    it('gives a running job no reason: it waits for nothing', () => {
      const e = event('batch-single-running');
      expect(batchTransitionOf(e.detail, 'event', Date.parse(e.time)).stateReason).toBeUndefined();
    });

    it('holds a failed job’s reason (exit code included) since the job stopped', () => {
      const e = event('batch-single-failed');
      const t = batchTransitionOf(e.detail, 'event', Date.parse(e.time));
      expect(t.state).toBe('FAILED');
      expect(t.stateReason?.text).toContain('exit code');
      expect(t.stateReason?.since).toBe(new Date(Number(e.detail.stoppedAt)).toISOString());
    });
  });

  describe('batchReasonCodeOf', () => {
    it.each([
      [
        'CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY - Service cannot fulfill …',
        'CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY',
      ],
      ['ACTION_REQUIRED - CE(s) associated with the job queue are invalid.', 'ACTION_REQUIRED'],
      ['MISCONFIGURATION:SERVICE_ROLE_PERMISSIONS', 'MISCONFIGURATION:SERVICE_ROLE_PERMISSIONS'],
      ['Essential container in task exited', undefined],
      ['Host EC2 (instance i-0a1b) terminated.', undefined],
    ])('reads %j as code %j', (reason, code) => {
      expect(batchReasonCodeOf(reason)).toBe(code);
    });
  });

  describe('batchAttemptOutcomesOf', () => {
    it('flags an attempt whose host was terminated (a Spot reclaim) as not the app’s failure', () => {
      const outcomes = batchAttemptOutcomesOf(event('batch-single-runnable-after-spot-reclaim').detail);
      expect(outcomes).toEqual([
        {
          attempt: 1,
          reason: 'Host EC2 (instance i-0a1b2c3d4e5f60718) terminated.',
          startedAt: '2025-01-01T12:02:18.000Z',
          stoppedAt: '2025-01-01T12:32:18.000Z',
          infrastructure: true,
        },
      ]);
    });

    it('leaves an attempt the app ended (exit code 137, out of memory) as the app’s', () => {
      const [outcome] = batchAttemptOutcomesOf(event('batch-single-runnable-after-retry').detail);
      expect(outcome?.exitCode).toBe(137);
      expect(outcome?.reason).toContain('OutOfMemoryError');
      expect(outcome?.infrastructure).toBeUndefined();
    });
  });

  describe('AwsBatchScheduler.describe', () => {
    it('reports a RUNNABLE job’s DescribeJobs statusReason as its state reason, holding since now', async () => {
      const now = 1_735_740_000_000;
      const { scheduler, batch } = mockedScheduler({ now });
      const job = parentJob({
        status: 'RUNNABLE',
        statusReason:
          'CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY - Service cannot fulfill the capacity requested for instance type p4d.24xlarge',
        startedAt: undefined,
      });
      batch.on(ListJobsCommand).resolves({
        jobSummaryList: [
          { jobId: job.jobId, jobName: job.jobName, jobArn: job.jobArn, createdAt: job.createdAt },
        ],
      });
      batch.on(DescribeJobsCommand).resolves({ jobs: [job] });

      const desc = await scheduler.describe('gpu:train-t4rcs9x6sv1m');

      expect(desc?.state).toBe('PENDING');
      expect(desc?.stateReason).toEqual({
        text: job.statusReason,
        code: 'CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY',
        since: new Date(now).toISOString(),
        source: 'aws_batch',
      });
    });
  });
});
