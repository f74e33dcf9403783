/** mapStateChangeEvent › the app id an event names, so its record is read by key. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { mapStateChangeEvent, type StateChangeEnvelope } from '../../../lib/events/index.js';

const fixture = (path: string) =>
  JSON.parse(readFileSync(new URL(`../../fixtures/${path}`, import.meta.url), 'utf8')) as StateChangeEnvelope;

describe('mapStateChangeEvent', () => {
  it("names a Batch job's app id as <queue name>:<job name>, the queue taken from its ARN", () => {
    const routed = mapStateChangeEvent(fixture('aws-batch/events/batch-single-running.json'));
    expect(routed).toMatchObject({
      scheduler: 'aws_batch',
      nativeName: 'ctl-run-01hzx7k2-train',
      appId: 'ml-gpu-queue:ctl-run-01hzx7k2-train',
    });
  });

  it('names no app id for a Batch event without a usable queue (the name index finds the record)', () => {
    const event = fixture('aws-batch/events/batch-single-running.json');
    for (const jobQueue of [undefined, '', 42, 'arn:aws:batch:us-east-1:123456789012:job-queue/']) {
      const routed = mapStateChangeEvent({ ...event, detail: { ...(event.detail as object), jobQueue } });
      expect(routed).toMatchObject({ scheduler: 'aws_batch', nativeName: 'ctl-run-01hzx7k2-train' });
      expect(routed).not.toHaveProperty('appId');
    }
  });

  it("names a SageMaker training job's app id as its name", () => {
    const routed = mapStateChangeEvent({
      source: 'aws.sagemaker',
      'detail-type': 'SageMaker Training Job State Change',
      detail: { TrainingJobName: 'train-x1', TrainingJobStatus: 'InProgress' },
    } as StateChangeEnvelope);
    expect(routed).toMatchObject({ scheduler: 'aws_sagemaker', nativeName: 'train-x1', appId: 'train-x1' });
  });
});
