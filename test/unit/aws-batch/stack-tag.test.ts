import { describe, expect, it } from 'vitest';
import { makeAppDef, makeRole, namedResource } from '../../../lib/specs/index.js';
import { mockedScheduler } from './helpers.js';

const app = makeAppDef({
  name: 'train',
  roles: [
    makeRole({
      name: 'trainer',
      image: 'alpine',
      entrypoint: 'sh',
      resource: namedResource('aws_t3.medium'),
    }),
  ],
  metadata: { 'torchx-serverless:stack': 'spoofed' },
});
const TAG = { 'torchx-serverless:stack': 'TorchxServerless-prod' };

describe('AwsBatchScheduler stack tag', () => {
  it('tags the job definition and the job, over app metadata of the same key', () => {
    const { scheduler } = mockedScheduler({ stackTags: TAG });
    const { request } = scheduler.submitDryrun(app, { queue: 'gpu' });
    expect(request.registerJobDefinition.tags?.['torchx-serverless:stack']).toBe('TorchxServerless-prod');
    expect(request.submitJob.tags?.['torchx-serverless:stack']).toBe('TorchxServerless-prod');
  });

  it('names a shared definition differently with and without the tag (no untagged definition is reused)', () => {
    const plain = mockedScheduler().scheduler.submitDryrun(makeAppDef({ ...app, metadata: {} }), {
      queue: 'gpu',
    });
    const tagged = mockedScheduler({ stackTags: TAG }).scheduler.submitDryrun(
      makeAppDef({ ...app, metadata: {} }),
      {
        queue: 'gpu',
      },
    );
    expect(plain.request.registerJobDefinition.tags).not.toHaveProperty('torchx-serverless:stack');
    expect(tagged.request.registerJobDefinition.jobDefinitionName).not.toBe(
      plain.request.registerJobDefinition.jobDefinitionName,
    );
  });
});
