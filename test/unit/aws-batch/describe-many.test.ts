/**
 * `AwsBatchScheduler.describeMany` (the reconciler's and local mode's follower's batched describe): the jobs
 * whose ids the scheduler knows are described together with DescribeJobs; an app it does not know is found
 * by name; one result per app id, in order.
 */
import {
  DescribeJobsCommand,
  ListJobsCommand,
  RegisterJobDefinitionCommand,
  SubmitJobCommand,
} from '@aws-sdk/client-batch';
import 'aws-sdk-client-mock-vitest/extend';
import { describe, expect, it } from 'vitest';
import { makeAppDef, makeResource, makeRole } from '../../../lib/specs/index.js';
import { ACCOUNT, JOB_ARN, JOB_ID, mockedScheduler, nodeJob, parentJob } from './helpers.js';

const OTHER_ID = '0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d';

function trainApp() {
  return makeAppDef({
    name: 'train',
    roles: [
      makeRole({
        name: 'trainer',
        image: 'ghcr.io/pytorch/torchx:0.8.0dev0',
        entrypoint: 'python',
        args: ['train.py'],
        resource: makeResource({ cpu: 2, gpu: 0, memMB: 4096 }),
      }),
    ],
  });
}

describe('AwsBatchScheduler.describeMany', () => {
  it('describes the jobs it submitted with one DescribeJobs and finds an unknown app by name', async () => {
    const { scheduler, batch } = mockedScheduler();
    batch.on(RegisterJobDefinitionCommand).resolves({
      jobDefinitionName: 'train-t4rcs9x6sv1m',
      jobDefinitionArn: `arn:aws:batch:us-east-1:${ACCOUNT}:job-definition/train-t4rcs9x6sv1m:1`,
      revision: 1,
    });
    batch.on(SubmitJobCommand).resolves({ jobArn: JOB_ARN, jobName: 'train-t4rcs9x6sv1m', jobId: JOB_ID });
    const submitted = await scheduler.schedule(scheduler.submitDryrun(trainApp(), { queue: 'gpu' }));
    batch.on(ListJobsCommand).resolves({
      jobSummaryList: [{ jobId: OTHER_ID, jobName: 'other-1', createdAt: 1 }],
    });
    batch.on(DescribeJobsCommand).callsFake((input: { jobs: string[] }) => ({
      jobs: input.jobs.map((id) =>
        id.includes('#')
          ? nodeJob(Number(id.slice(id.indexOf('#') + 1)), { status: 'SUCCEEDED' })
          : parentJob({
              jobId: id,
              jobName: id === JOB_ID ? 'train-t4rcs9x6sv1m' : 'other-1',
              status: 'SUCCEEDED',
            }),
      ),
    }));

    const results = await scheduler.describeMany([submitted, 'gpu:other-1', 'gpu:missing-1']);

    expect(results.map((r) => (r.status === 'fulfilled' ? (r.value?.state ?? 'unknown') : 'error'))).toEqual([
      'SUCCEEDED',
      'SUCCEEDED',
      'unknown',
    ]);
    // The submitted job was described by the id SubmitJob answered; only the others were looked up by name.
    const parents = batch
      .commandCalls(DescribeJobsCommand)
      .map((call) => call.args[0].input.jobs ?? [])
      .filter((jobs) => !jobs.some((id) => id.includes('#')));
    expect(parents[0]).toEqual([JOB_ID]);
    const looked = batch.commandCalls(ListJobsCommand).map((call) => call.args[0].input.filters?.[0]?.values);
    expect(looked).toEqual([['other-1'], ['missing-1']]);
  });
});
