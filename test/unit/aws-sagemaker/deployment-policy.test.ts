import { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import { SageMakerClient } from '@aws-sdk/client-sagemaker';
import { describe, expect, it } from 'vitest';
import { createAwsSageMakerScheduler } from '../../../lib/schedulers/aws-sagemaker/index.js';
import { InstanceTypeNotAllowedError } from '../../../lib/schedulers/errors.js';
import { makeAppDef, makeRole, namedResource } from '../../../lib/specs/index.js';
import { BASE_CFG, IMAGE } from './helpers.js';

const app = makeAppDef({
  name: 'train',
  roles: [
    makeRole({
      name: 'trainer',
      image: IMAGE,
      entrypoint: 'python',
      resource: namedResource('aws_g5.xlarge'),
    }),
  ],
});

function scheduler(options: { stackTags?: Record<string, string>; allowedInstanceTypes?: string[] } = {}) {
  return createAwsSageMakerScheduler(
    { sessionName: 'torchx' },
    {
      sageMakerClient: new SageMakerClient({}),
      logsClient: new CloudWatchLogsClient({}),
      defaultUser: 'alice',
      version: '0.1.0',
      uniqueId: () => 'abc',
      ...options,
    },
  );
}

function refusal(fn: () => unknown): InstanceTypeNotAllowedError {
  try {
    fn();
  } catch (error) {
    if (error instanceof InstanceTypeNotAllowedError) return error;
    throw error;
  }
  throw new Error('not refused');
}

describe('AwsSageMakerScheduler deployment policy', () => {
  it('refuses an instance type outside the allow-list, naming cfg.instance_type', () => {
    const s = scheduler({ allowedInstanceTypes: ['ml.g5.xlarge'] });
    const error = refusal(() => s.submitDryrun(app, { ...BASE_CFG, instance_type: 'ml.p4d.24xlarge' }));
    expect(error.code).toBe('InstanceTypeNotAllowed');
    expect(error.issues[0]?.path).toBe('cfg.instance_type');
    expect(error.message).toContain('TXS_SAGEMAKER_INSTANCE_TYPES');
    expect(() => s.validate(app, { ...BASE_CFG, instance_type: 'ml.p4d.24xlarge' })).toThrow(
      InstanceTypeNotAllowedError,
    );
  });

  it("names the role's resource when the instance type comes from it", () => {
    const s = scheduler({ allowedInstanceTypes: ['ml.p4d.24xlarge'] });
    expect(refusal(() => s.submitDryrun(app, BASE_CFG)).issues[0]?.path).toBe('app.roles.0.resource');
  });

  it('runs allowed instance types, and any type without an allow-list', () => {
    const allowed = scheduler({ allowedInstanceTypes: ['ml.g5.xlarge'] }).submitDryrun(app, BASE_CFG);
    expect(allowed.request.createTrainingJob.ResourceConfig?.InstanceType).toBe('ml.g5.xlarge');
    const any = scheduler().submitDryrun(app, { ...BASE_CFG, instance_type: 'ml.p4d.24xlarge' });
    expect(any.request.createTrainingJob.ResourceConfig?.InstanceType).toBe('ml.p4d.24xlarge');
  });

  it('adds the stack tag last, over app metadata of the same key, and no tag without one', () => {
    const spoof = makeAppDef({ ...app, metadata: { 'torchx-serverless:stack': 'other-stack' } });
    const tagged = scheduler({
      stackTags: { 'torchx-serverless:stack': 'TorchxServerless-prod' },
    }).submitDryrun(spoof, BASE_CFG);
    const tags = tagged.request.createTrainingJob.Tags ?? [];
    expect(tags.filter((t) => t.Key === 'torchx-serverless:stack')).toEqual([
      { Key: 'torchx-serverless:stack', Value: 'TorchxServerless-prod' },
    ]);
    const plain = scheduler().submitDryrun(app, BASE_CFG).request.createTrainingJob.Tags ?? [];
    expect(plain.map((t) => t.Key)).not.toContain('torchx-serverless:stack');
  });
});
