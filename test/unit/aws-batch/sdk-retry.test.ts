/**
 * The SDK's own retry and error parsing, exercised through a fake HTTP handler (the SDK wire): the SDK's
 * serializers, retry middleware and deserializers all run; only the network is replaced.
 */
import { describe, expect, it } from 'vitest';
import { BackendAccessDeniedError, BackendError } from '../../../lib/schedulers/errors.js';
import { makeAppDef, makeResource, makeRole, ValidationError } from '../../../lib/specs/index.js';
import { JOB_ID, parentJob, type WireResponse, wireScheduler } from './helpers.js';

const app = makeAppDef({
  name: 'train',
  roles: [
    makeRole({
      name: 'trainer',
      image: 'alpine:3',
      entrypoint: 'sh',
      args: ['-c', 'echo ${app_id}'],
      resource: makeResource({ cpu: 1, gpu: 0, memMB: 1024 }),
    }),
  ],
});

const registered: WireResponse = {
  status: 200,
  body: {
    jobDefinitionName: 'train-42',
    jobDefinitionArn: 'arn:aws:batch:us-east-1:123456789012:job-definition/train-42:1',
    revision: 1,
  },
};
const submitted: WireResponse = { status: 200, body: { jobArn: 'arn', jobName: 'train-42', jobId: JOB_ID } };
const tooManyRequests: WireResponse = {
  status: 429,
  errorType: 'TooManyRequestsException',
  body: { message: 'Too Many Requests.' },
};

describe('AwsBatchScheduler over the SDK wire', () => {
  it('succeeds when the SDK retries a SubmitJob answered with 429 TooManyRequestsException', async () => {
    const { scheduler, requests } = wireScheduler([registered, tooManyRequests, submitted]);
    await expect(scheduler.submit(app, { queue: 'gpu' })).resolves.toBe('gpu:train-42');
    expect(requests).toEqual(['POST /v1/registerjobdefinition', 'POST /v1/submitjob', 'POST /v1/submitjob']);
  });

  it('succeeds when the SDK retries a ListJobs answered with ThrottlingException', async () => {
    const { scheduler, requests } = wireScheduler([
      { status: 400, errorType: 'ThrottlingException', body: { message: 'Rate exceeded' } },
      { status: 200, body: { jobSummaryList: [{ jobId: JOB_ID, jobName: 'train-t4rcs9x6sv1m' }] } },
      { status: 200, body: { jobs: [parentJob({ status: 'SUCCEEDED' })] } },
      { status: 200, body: { jobs: [] } },
    ]);
    await expect(scheduler.describe('gpu:train-t4rcs9x6sv1m')).resolves.toMatchObject({ state: 'SUCCEEDED' });
    expect(requests).toEqual([
      'POST /v1/listjobs',
      'POST /v1/listjobs',
      'POST /v1/describejobs',
      'POST /v1/describejobs',
    ]);
  });

  it('reports throttling that outlasts every attempt as a retryable BackendError', async () => {
    const { scheduler, requests } = wireScheduler([
      registered,
      tooManyRequests,
      tooManyRequests,
      tooManyRequests,
    ]);
    const error = await scheduler.submit(app, { queue: 'gpu' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BackendError);
    expect((error as BackendError).retryable).toBe(true);
    expect((error as Error).message).toBe(
      'AWS throttled batch:SubmitJob (TooManyRequestsException) after 3 attempt(s); try again later',
    );
    expect(requests).toHaveLength(4);
  });

  it('retries a ServerException', async () => {
    const { scheduler, requests } = wireScheduler([
      { status: 500, errorType: 'ServerException', body: { message: 'Internal' } },
      registered,
      submitted,
    ]);
    await expect(scheduler.submit(app, { queue: 'gpu' })).resolves.toBe('gpu:train-42');
    expect(requests).toHaveLength(3);
  });

  it('does not retry access denied and names the action', async () => {
    const { scheduler, requests } = wireScheduler([
      {
        status: 403,
        errorType: 'AccessDeniedException',
        body: { message: 'User is not authorized to perform: batch:RegisterJobDefinition' },
      },
    ]);
    const error = await scheduler.submit(app, { queue: 'gpu' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BackendAccessDeniedError);
    expect((error as Error).message).toContain('Grant batch:RegisterJobDefinition');
    expect(requests).toHaveLength(1);
  });

  it('does not retry an unknown queue and names cfg.queue', async () => {
    const { scheduler, requests } = wireScheduler([
      registered,
      { status: 400, errorType: 'ClientException', body: { message: 'Job Queue nope not found.' } },
    ]);
    const error = await scheduler.submit(app, { queue: 'nope' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).issues[0]?.path).toBe('cfg.queue');
    expect(requests).toHaveLength(2);
  });
});
