/**
 * Describe, status and logs of a job run in a workspace: its node ranges are `ecsProperties` tasks (a fetch
 * container, then the role's `main` container), so DescribeJobs reports containers under `ecsProperties` and
 * attempts under `taskProperties` instead of `container`.
 */
import { DescribeJobsCommand, type JobDetail, ListJobsCommand } from '@aws-sdk/client-batch';
import { GetLogEventsCommand } from '@aws-sdk/client-cloudwatch-logs';
import 'aws-sdk-client-mock-vitest/extend';
import { describe, expect, it } from 'vitest';
import {
  awsBatchRunOpts,
  batchReasonOf,
  batchTransitionOf,
  batchWorkspaceOf,
  translateApp,
} from '../../../lib/schedulers/aws-batch/index.js';
import { makeAppDef, makeResource, makeRole } from '../../../lib/specs/index.js';
import { JOB_ID, mockedScheduler, nodeJob, parentJob } from './helpers.js';

const APP_ID = 'gpu:train-t4rcs9x6sv1m';
const SHA = '3f2a9c0d11be4e5f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f';

/** The parent job of a two-role app (1 + 2 nodes) registered with a workspace, as DescribeJobs returns it. */
function workspaceParent(overrides: Partial<JobDetail> = {}): JobDetail {
  const app = makeAppDef({
    name: 'train',
    roles: [
      makeRole({
        name: 'ps',
        image: 'ghcr.io/pytorch/torchx:0.8.0dev0',
        entrypoint: 'python',
        args: ['-m', 'ps'],
        resource: makeResource({ cpu: 2, gpu: 0, memMB: 4096 }),
      }),
      makeRole({
        name: 'trainer',
        image: 'ghcr.io/pytorch/torchx:0.8.0dev0',
        entrypoint: 'torchrun',
        args: ['--nnodes', '2', 'train.py'],
        numReplicas: 2,
        resource: makeResource({ cpu: 8, gpu: 1, memMB: 31456 }),
      }),
    ],
  });
  const cfg = awsBatchRunOpts('alice').resolve({
    queue: 'gpu',
    job_role_arn: 'arn:aws:iam::123456789012:role/txs-job',
    log_group: '/ml/jobs',
  });
  const archive = `s3://txs-ws/alice/${SHA}.tar.gz`;
  const ws = batchWorkspaceOf({ sha256: SHA, size: 10, fileCount: 1, archive });
  const definition = translateApp(app, cfg as never, () => 'train-t4rcs9x6sv1m', {}, false, '', ws).request
    .registerJobDefinition;
  return parentJob({ nodeProperties: definition.nodeProperties, ...overrides });
}

/** A node job of {@link workspaceParent}: its task's containers as DescribeJobs reports them. */
function workspaceNode(
  index: number,
  fetch: { exitCode?: number; reason?: string } = { exitCode: 0 },
  overrides: Partial<JobDetail> = {},
): JobDetail {
  const main =
    fetch.exitCode === 0
      ? {
          name: 'main',
          essential: true,
          logStreamName: `train/main/task${index}`,
          networkInterfaces: [{ privateIpv4Address: `10.0.0.${10 + index}` }],
        }
      : { name: 'main', essential: true };
  return nodeJob(index, {
    container: undefined,
    ecsProperties: {
      taskProperties: [
        {
          containers: [
            {
              name: 'workspace-fetch',
              essential: false,
              logStreamName: `train/workspace-fetch/task${index}`,
              ...fetch,
            },
            main,
          ],
        },
      ],
    },
    ...overrides,
  });
}

function setup(parent: JobDetail, nodes: JobDetail[]) {
  const mocked = mockedScheduler();
  mocked.batch.on(ListJobsCommand).resolves({ jobSummaryList: [{ jobId: JOB_ID, jobName: parent.jobName }] });
  mocked.batch.on(DescribeJobsCommand).callsFake((input: { jobs: string[] }) => ({
    jobs: [parent, ...nodes].filter((job) => input.jobs.includes(job.jobId ?? '')),
  }));
  return mocked;
}

describe('aws_batch describe of a job in a workspace', () => {
  it("rebuilds each role from its main container, with the role's own command, and hosts from the main containers", async () => {
    const { scheduler } = setup(
      workspaceParent(),
      [0, 1, 2].map((i) => workspaceNode(i)),
    );
    const desc = await scheduler.describe(APP_ID);
    expect(
      desc?.roles.map((role) => [role.name, role.image, role.entrypoint, role.args, role.numReplicas]),
    ).toEqual([
      ['ps', 'ghcr.io/pytorch/torchx:0.8.0dev0', 'python', ['-m', 'ps'], 1],
      ['trainer', 'ghcr.io/pytorch/torchx:0.8.0dev0', 'torchrun', ['--nnodes', '2', 'train.py'], 2],
    ]);
    expect(desc?.roles[1]?.env).toEqual({ TORCHX_ROLE_IDX: '1', TORCHX_ROLE_NAME: 'trainer' });
    expect(desc?.roles[1]?.resource).toEqual(makeResource({ cpu: 8, gpu: 1, memMB: 31456 }));
    expect(desc?.rolesStatuses.flatMap((r) => r.replicas.map((x) => x.hostname))).toEqual([
      '10.0.0.10',
      '10.0.0.11',
      '10.0.0.12',
    ]);
  });

  it("says the workspace fetch failed, with its exit code and log stream, when a node's fetch container failed", async () => {
    const reason = 'Essential container in task exited';
    const { scheduler } = setup(
      workspaceParent({ status: 'FAILED', statusReason: reason, stoppedAt: 1_735_736_000_000 }),
      [
        workspaceNode(0, { exitCode: 1 }, { status: 'FAILED', statusReason: reason }),
        workspaceNode(1),
        workspaceNode(2),
      ],
    );
    const desc = await scheduler.describe(APP_ID);
    const failed = desc?.rolesStatuses[0]?.replicas[0];
    expect(failed?.state).toBe('FAILED');
    expect(failed?.exitCode).toBeUndefined();
    expect(failed?.reason).toBe(
      `${reason}; workspace fetch failed: exit code 1 (log stream train/workspace-fetch/task0)`,
    );
    expect(desc?.msg).toContain(
      'ps[0]: Essential container in task exited; workspace fetch failed: exit code 1',
    );
  });

  it("reads a replica's logs from its main container's stream, not the fetch container's", async () => {
    const { scheduler, logs } = setup(
      workspaceParent(),
      [0, 1, 2].map((i) => workspaceNode(i)),
    );
    logs
      .on(GetLogEventsCommand)
      .resolves({ events: [{ timestamp: 1, message: 'epoch 1' }], nextForwardToken: 'f/1' });
    const page = await scheduler.readLogs(APP_ID, { role: 'trainer', replica: 1 });
    expect(page.lines).toEqual(['epoch 1']);
    expect(logs).toHaveReceivedCommandExactlyOnceWith(GetLogEventsCommand, {
      logGroupName: '/ml/jobs',
      logStreamName: 'train/main/task2',
      startFromHead: true,
      limit: 1000,
    });
  });

  it("shows the fetch container's output as the logs of a replica whose workspace fetch failed", async () => {
    const reason = 'Essential container in task exited';
    const { scheduler, logs } = setup(
      workspaceParent({ status: 'FAILED', statusReason: reason, stoppedAt: 1_735_736_000_000 }),
      [
        workspaceNode(0, { exitCode: 1 }, { status: 'FAILED', statusReason: reason }),
        workspaceNode(1),
        workspaceNode(2),
      ],
    );
    const denied = 'fatal error: An error occurred (403) when calling the HeadObject operation: Forbidden';
    logs
      .on(GetLogEventsCommand)
      .resolves({ events: [{ timestamp: 1, message: denied }], nextForwardToken: 'f/1' });
    const page = await scheduler.readLogs(APP_ID, { role: 'ps', replica: 0 });
    expect(page.lines).toEqual([denied]);
    expect(logs).toHaveReceivedCommandWith(GetLogEventsCommand, {
      logStreamName: 'train/workspace-fetch/task0',
    });
  });
});

describe('aws_batch state of a job in a workspace', () => {
  const fetchFailed = {
    status: 'FAILED',
    statusReason: 'Essential container in task exited',
    attempts: [
      {
        statusReason: 'Essential container in task exited',
        taskProperties: [
          {
            containers: [
              { name: 'workspace-fetch', exitCode: 1, logStreamName: 's/fetch' },
              { name: 'main', reason: 'DependencyConditionNotSatisfied' },
            ],
          },
        ],
      },
    ],
  };

  it("gives a failed job's reason from its attempt's task: the fetch failure, then the main container's", () => {
    expect(batchReasonOf(fetchFailed)).toBe(
      'Essential container in task exited; workspace fetch failed: exit code 1 (log stream s/fetch); ' +
        'DependencyConditionNotSatisfied',
    );
  });

  it("records the attempt's outcome from its main container, with the fetch failure in its reason", () => {
    const transition = batchTransitionOf(fetchFailed, 'event', 1_735_736_000_000);
    expect(transition.attemptOutcomes).toEqual([
      {
        attempt: 1,
        reason:
          'Essential container in task exited; workspace fetch failed: exit code 1 (log stream s/fetch); ' +
          'DependencyConditionNotSatisfied',
      },
    ]);
  });

  it("takes a succeeded attempt's exit code from the main container, not the fetch container", () => {
    const transition = batchTransitionOf(
      {
        status: 'FAILED',
        attempts: [
          {
            taskProperties: [
              {
                containers: [
                  { name: 'workspace-fetch', exitCode: 0 },
                  { name: 'main', exitCode: 3 },
                ],
              },
            ],
          },
        ],
      },
      'event',
      1_735_736_000_000,
    );
    expect(transition.attemptOutcomes).toEqual([{ attempt: 1, exitCode: 3 }]);
    expect(transition.reason).toBe('exit code 3');
  });
});
