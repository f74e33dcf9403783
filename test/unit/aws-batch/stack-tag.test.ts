import { describe, expect, it } from 'vitest';
import { batchNamePrefix, MAX_BATCH_NAME_PREFIX_LENGTH } from '../../../functions/shared/env-names.js';
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

describe('AwsBatchScheduler name prefix (what the Run role may register and submit)', () => {
  const PREFIX = batchNamePrefix('TorchxServerless-prod');
  const perRun = makeAppDef({
    ...app,
    metadata: {},
    roles: app.roles.map((role) => ({ ...role, args: ['--run', '${app_id}'] })),
  });
  const namesOf = (a: typeof app, namePrefix?: string) => {
    const { request } = mockedScheduler({
      stackTags: TAG,
      ...(namePrefix === undefined ? {} : { namePrefix }),
    }).scheduler.submitDryrun(a, { queue: 'gpu' });
    return [request.submitJob.jobName ?? '', request.registerJobDefinition.jobDefinitionName ?? ''];
  };

  it('starts the job name and the shared or per-run definition name with the prefix', () => {
    const shared = makeAppDef({ ...app, metadata: {} });
    expect(namesOf(shared, PREFIX)[0]).toBe(`${PREFIX}train-t4rcs9x6sv1m`);
    expect(namesOf(shared, PREFIX)[1]).toMatch(new RegExp(`^${PREFIX}train-[0-9a-f]{12}$`));
    expect(namesOf(perRun, PREFIX)).toEqual([`${PREFIX}train-t4rcs9x6sv1m`, `${PREFIX}train-t4rcs9x6sv1m`]);
    expect(namesOf(shared)).toEqual(['train-t4rcs9x6sv1m', expect.stringMatching(/^train-[0-9a-f]{12}$/)]);
  });

  it('keeps every name within 128 characters for the longest app name and prefix', () => {
    const longPrefix = batchNamePrefix(`S${'x'.repeat(127)}`);
    for (const base of [app, perRun]) {
      const long = makeAppDef({ ...base, metadata: {}, name: 'a'.repeat(200) });
      for (const name of namesOf(long, longPrefix)) {
        expect(name.startsWith(longPrefix)).toBe(true);
        expect(name.length).toBeLessThanOrEqual(128);
      }
    }
  });
});

describe('batchNamePrefix', () => {
  it('is the stack name and _, so no stack prefix starts another', () => {
    expect(batchNamePrefix('a')).toBe('a_');
    expect(batchNamePrefix('a-b').startsWith(batchNamePrefix('a'))).toBe(false);
  });

  it('stays within 32 characters and differs per stack for long stack names', () => {
    const one = batchNamePrefix(`Team-${'x'.repeat(40)}-one`);
    const two = batchNamePrefix(`Team-${'x'.repeat(40)}-two`);
    expect(one).toHaveLength(MAX_BATCH_NAME_PREFIX_LENGTH);
    expect(one).not.toBe(two);
    expect(one).toMatch(/^[A-Za-z][A-Za-z0-9-]*_$/);
  });

  it('refuses what is not a stack name', () => {
    expect(() => batchNamePrefix('my_stack')).toThrow(TypeError);
    expect(() => batchNamePrefix('')).toThrow(TypeError);
  });
});
