import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TaskContainerProperties } from '@aws-sdk/client-batch';
import { afterEach, describe, expect, it } from 'vitest';
import { create } from '../../../functions/schedulers/aws-batch.js';
import type { SchedulerDeps } from '../../../functions/schedulers/scheduler-module.js';
import { readDeploymentConfig } from '../../../functions/shared/deployment-config.js';
import {
  type AwsBatchOpts,
  awsBatchRunOpts,
  batchWorkspaceOf,
  translateApp,
} from '../../../lib/schedulers/aws-batch/index.js';
import { DEFAULT_WORKSPACE_FETCH_IMAGE, WORKSPACE_MOUNT_PATH } from '../../../lib/schedulers/workspace.js';
import {
  type AppDef,
  type JobWorkspace,
  makeAppDef,
  makeResource,
  makeRole,
  ValidationError,
} from '../../../lib/specs/index.js';
import { mockedScheduler } from './helpers.js';

const SHA = '3f2a9c0d11be4e5f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f';
const JOB_ROLE = 'arn:aws:iam::123456789012:role/txs-job';
const workspace = (archive = `s3://txs-ws/alice/${SHA}.tar.gz`): JobWorkspace => ({
  sha256: SHA,
  size: 1234,
  fileCount: 3,
  archive,
});

function opts(cfg: Record<string, unknown> = {}): AwsBatchOpts {
  return awsBatchRunOpts('alice').resolve({
    queue: 'q',
    job_role_arn: JOB_ROLE,
    ...cfg,
  } as never) as AwsBatchOpts;
}

const namer = (prefix: string) => `${prefix}-42`;

function trainApp(): AppDef {
  return makeAppDef({
    name: 'train',
    roles: [
      makeRole({
        name: 'trainer',
        image: 'ghcr.io/me/train:1',
        entrypoint: 'python',
        args: ['train.py', '--lr', '0.1'],
        env: { LOGLEVEL: 'INFO' },
        resource: makeResource({ cpu: 4, gpu: 1, memMB: 8192 }),
      }),
    ],
  });
}

const translate = (app: AppDef, cfg: AwsBatchOpts, archive?: string) =>
  translateApp(app, cfg, namer, {}, false, '', batchWorkspaceOf(workspace(archive))).request;

function issuesOf(fn: () => unknown): { path: string; message: string }[] {
  try {
    fn();
  } catch (e) {
    if (e instanceof ValidationError) return [...e.issues];
    throw e;
  }
  throw new Error('expected a ValidationError');
}

const containersOf = (request: ReturnType<typeof translate>, range = 0): TaskContainerProperties[] =>
  request.registerJobDefinition.nodeProperties?.nodeRangeProperties?.[range]?.ecsProperties
    ?.taskProperties?.[0]?.containers ?? [];

describe('aws_batch with a workspace', () => {
  it('registers each node range as a task that fetches the archive with the job role, then runs the role in it', () => {
    const request = translate(
      trainApp(),
      opts({ execution_role_arn: 'arn:aws:iam::123456789012:role/exec' }),
    );
    const archivePath = `/txs-workspace/${SHA}.tar.gz`;
    expect(request.registerJobDefinition).toEqual({
      jobDefinitionName: expect.stringMatching(/^train-[0-9a-f]{12}$/),
      type: 'multinode',
      nodeProperties: {
        numNodes: 1,
        mainNode: 0,
        nodeRangeProperties: [
          {
            targetNodes: '0:0',
            ecsProperties: {
              taskProperties: [
                {
                  containers: [
                    {
                      name: 'workspace-fetch',
                      essential: false,
                      image: DEFAULT_WORKSPACE_FETCH_IMAGE,
                      command: [
                        's3',
                        'cp',
                        '--only-show-errors',
                        `s3://txs-ws/alice/${SHA}.tar.gz`,
                        archivePath,
                      ],
                      mountPoints: [
                        { sourceVolume: 'txs-workspace', containerPath: '/txs-workspace', readOnly: false },
                      ],
                      logConfiguration: { logDriver: 'awslogs' },
                    },
                    {
                      name: 'main',
                      essential: true,
                      image: 'ghcr.io/me/train:1',
                      command: [
                        'sh',
                        '-c',
                        'tar -xzf "$0" && exec "$@"',
                        archivePath,
                        'python',
                        'train.py',
                        '--lr',
                        '0.1',
                      ],
                      environment: [
                        { name: 'LOGLEVEL', value: 'INFO' },
                        { name: 'TORCHX_ROLE_IDX', value: '0' },
                        { name: 'TORCHX_ROLE_NAME', value: 'trainer' },
                      ],
                      privileged: false,
                      resourceRequirements: [
                        { type: 'VCPU', value: '4' },
                        { type: 'MEMORY', value: '8192' },
                        { type: 'GPU', value: '1' },
                      ],
                      linuxParameters: { sharedMemorySize: 8192, devices: [] },
                      logConfiguration: { logDriver: 'awslogs' },
                      mountPoints: [
                        { sourceVolume: 'txs-workspace', containerPath: '/txs-workspace', readOnly: true },
                      ],
                      dependsOn: [{ containerName: 'workspace-fetch', condition: 'SUCCESS' }],
                    },
                  ],
                  volumes: [{ name: 'txs-workspace' }],
                  taskRoleArn: JOB_ROLE,
                  executionRoleArn: 'arn:aws:iam::123456789012:role/exec',
                },
              ],
            },
          },
        ],
      },
      retryStrategy: { attempts: 1, evaluateOnExit: [{ onExitCode: '0', action: 'EXIT' }] },
      tags: {
        'torchx.pytorch.org/version': expect.any(String),
        'torchx.pytorch.org/app-name': 'train',
        'torchx.pytorch.org/user': 'alice',
      },
    });
    expect(request.submitJob).toEqual({
      jobName: 'train-42',
      jobQueue: 'q',
      jobDefinition: request.registerJobDefinition.jobDefinitionName,
      tags: request.registerJobDefinition.tags,
    });
  });

  it('gives every node range of a multi-node job its own task, with the role’s mounts, ulimits and instance type', () => {
    const app = trainApp();
    app.roles.push(
      makeRole({
        name: 'worker',
        image: 'ghcr.io/me/worker:2',
        entrypoint: 'torchrun',
        args: ['--node_rank', '${replica_id}', 'w.py'],
        numReplicas: 2,
        mounts: [{ type: 'volume', src: 'fs-0123', dstPath: '/data', readOnly: true }],
        resource: makeResource({
          cpu: 8,
          gpu: 0,
          memMB: 16384,
          capabilities: { 'node.kubernetes.io/instance-type': 'c5.2xlarge' },
        }),
      }),
    );
    const request = translate(app, opts({ ulimits: 'nofile:1024:4096', log_group: '/ml/jobs' }));
    const ranges = request.registerJobDefinition.nodeProperties?.nodeRangeProperties ?? [];
    expect(request.registerJobDefinition.nodeProperties?.numNodes).toBe(3);
    expect(ranges.map((range) => range.targetNodes)).toEqual(['0:0', '1:2']);
    for (const range of ranges) expect(range).not.toHaveProperty('container');
    expect(ranges[1]?.instanceTypes).toEqual(['c5.2xlarge']);
    expect(ranges[0]).not.toHaveProperty('instanceTypes');
    const task = ranges[1]?.ecsProperties?.taskProperties?.[0];
    expect(task?.volumes).toEqual([
      { name: 'mount_0', efsVolumeConfiguration: { fileSystemId: 'fs-0123' } },
      { name: 'txs-workspace' },
    ]);
    const [fetch, main] = containersOf(request, 1);
    expect(main?.command).toEqual([
      'sh',
      '-c',
      'tar -xzf "$0" && exec "$@"',
      `/txs-workspace/${SHA}.tar.gz`,
      'torchrun',
      '--node_rank',
      '$AWS_BATCH_JOB_NODE_INDEX',
      'w.py',
    ]);
    expect(main?.mountPoints).toEqual([
      { containerPath: '/data', readOnly: true, sourceVolume: 'mount_0' },
      { sourceVolume: 'txs-workspace', containerPath: '/txs-workspace', readOnly: true },
    ]);
    expect(main?.ulimits).toEqual([{ name: 'nofile', softLimit: 1024, hardLimit: 4096 }]);
    const logs = { logDriver: 'awslogs', options: { 'awslogs-group': '/ml/jobs' } };
    expect(main?.logConfiguration).toEqual(logs);
    expect(fetch?.logConfiguration).toEqual(logs);
  });

  it('makes the main container privileged exactly as cfg.privileged, and the fetch container never', () => {
    for (const privileged of [false, true]) {
      const [fetch, main] = containersOf(translate(trainApp(), opts({ privileged })));
      expect(main?.privileged).toBe(privileged);
      expect(fetch).not.toHaveProperty('privileged');
    }
  });

  it('moves env values holding the job name into an override of the main container, sharing the definition', () => {
    const app = trainApp();
    app.roles[0]!.env = { TORCHX_JOB_ID: 'aws_batch://torchx/${app_id}' };
    const cfg = opts();
    const ws = batchWorkspaceOf(workspace());
    const first = translateApp(app, cfg, (p) => `${p}-a1`, {}, false, '', ws).request;
    const second = translateApp(app, cfg, (p) => `${p}-b2`, {}, false, '', ws).request;
    expect(second.registerJobDefinition).toEqual(first.registerJobDefinition);
    expect(first.submitJob.nodeOverrides).toEqual({
      nodePropertyOverrides: [
        {
          targetNodes: '0:0',
          ecsPropertiesOverride: {
            taskProperties: [
              {
                containers: [
                  {
                    name: 'main',
                    environment: [{ name: 'TORCHX_JOB_ID', value: 'aws_batch://torchx/train-a1' }],
                  },
                ],
              },
            ],
          },
        },
      ],
    });
    const other = translateApp(
      app,
      cfg,
      (p) => `${p}-a1`,
      {},
      false,
      '',
      batchWorkspaceOf({ ...workspace(), sha256: 'f'.repeat(64) }),
    ).request;
    expect(other.registerJobDefinition.jobDefinitionName).not.toBe(
      first.registerJobDefinition.jobDefinitionName,
    );
  });

  it('keeps the environment in place when the command names the job (a per-run definition)', () => {
    const app = trainApp();
    app.roles[0]!.args = ['--run', '${app_id}'];
    app.roles[0]!.env = { TORCHX_JOB_ID: 'aws_batch://torchx/${app_id}' };
    const request = translate(app, opts());
    expect(request.registerJobDefinition.jobDefinitionName).toBe('train-42');
    expect(request.submitJob).not.toHaveProperty('nodeOverrides');
    expect(containersOf(request)[1]?.environment).toContainEqual({
      name: 'TORCHX_JOB_ID',
      value: 'aws_batch://torchx/train-42',
    });
  });

  it('refuses a job without a job role, naming job_role_arn and what the role must read', () => {
    const issues = issuesOf(() => translate(trainApp(), opts({ job_role_arn: null })));
    expect(issues).toHaveLength(1);
    expect(issues[0]?.path).toBe('cfg.job_role_arn');
    expect(issues[0]?.message).toContain(`s3:GetObject on s3://txs-ws/alice/${SHA}.tar.gz`);
  });

  it('refuses an archive the job cannot reach before translating, naming workspace', () => {
    const { scheduler, batch } = mockedScheduler();
    for (const archive of [
      `/var/lib/txs/workspaces/archives/${SHA}.tar.gz`,
      'https://example.com/a.tar.gz',
      's3://txs-ws',
      's3://txs-ws/',
      's3://txs ws/a.tar.gz',
    ]) {
      expect(() => scheduler.checkWorkspace(workspace(archive))).toThrow(ValidationError);
      const issues = issuesOf(() => scheduler.validatedDryrun(trainApp(), opts(), workspace(archive)));
      expect(issues.map((issue) => issue.path)).toEqual(['workspace']);
      expect(issues[0]?.message).toContain('cannot reach');
    }
    expect(batch.calls()).toHaveLength(0);
  });

  it('takes an s3:// archive in a dry run, and the deployment’s fetch image when it names one', () => {
    const { scheduler } = mockedScheduler({
      workspaceFetchImage: '123456789012.dkr.ecr.us-east-1.amazonaws.com/aws-cli:2',
    });
    scheduler.checkWorkspace(workspace());
    const info = scheduler.validatedDryrun(trainApp(), opts(), workspace());
    const [fetch] = containersOf(info.request);
    expect(fetch?.image).toBe('123456789012.dkr.ecr.us-east-1.amazonaws.com/aws-cli:2');
  });

  it("uses the deployment's fetch image (TXS_WORKSPACE_FETCH_IMAGE) in the functions' translations", async () => {
    const image = '123456789012.dkr.ecr.us-east-1.amazonaws.com/aws-cli:2.31.23';
    const deployment = readDeploymentConfig({ TXS_WORKSPACE_FETCH_IMAGE: image });
    const factory = await create({ submits: false, deployment } as SchedulerDeps);
    const translator = factory({ sessionName: 'torchx' });
    const [fetch] = containersOf(translator.submitDryrun(trainApp(), opts(), workspace()).request as never);
    expect(fetch?.image).toBe(image);
  });

  it('leaves the request without a workspace as it was', () => {
    const { scheduler } = mockedScheduler();
    const info = scheduler.submitDryrun(trainApp(), { queue: 'q', job_role_arn: JOB_ROLE });
    const range = info.request.registerJobDefinition.nodeProperties?.nodeRangeProperties?.[0];
    expect(Object.keys(range ?? {}).sort()).toEqual(['container', 'targetNodes']);
    expect(range?.container?.command).toEqual(['python', 'train.py', '--lr', '0.1']);
  });
});

describe('aws_batch workspace task, run with the real sh and tar', () => {
  const dirs: string[] = [];
  const tempDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'txs-batch-ws-'));
    dirs.push(dir);
    return dir;
  };
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('runs the entrypoint in the archive the fetch container wrote to the shared volume', () => {
    const src = tempDir();
    writeFileSync(join(src, 'train.py'), 'from the workspace\n');
    const archive = join(tempDir(), 'upload.tar.gz');
    execFileSync('tar', ['-czf', archive, '-C', src, 'train.py']);
    const app = trainApp();
    app.roles[0]!.entrypoint = 'cat';
    app.roles[0]!.args = ['train.py'];
    const [fetch, main] = containersOf(translate(app, opts()));
    // The fetch container's destination (`aws s3 cp SRC DEST`) is the file the main container unpacks; the
    // shared volume is played by a directory standing in for its mount path.
    const destination = fetch?.command?.at(-1) ?? '';
    expect(main?.command?.[3]).toBe(destination);
    const volume = tempDir();
    copyFileSync(archive, join(volume, destination.slice(`${WORKSPACE_MOUNT_PATH}/`.length)));
    const [file, ...args] = (main?.command ?? []).map((arg) => arg.replace(WORKSPACE_MOUNT_PATH, volume));
    const workdir = tempDir();
    expect(execFileSync(file as string, args, { cwd: workdir, encoding: 'utf8' })).toBe(
      'from the workspace\n',
    );
    expect(readFileSync(join(workdir, 'train.py'), 'utf8')).toBe('from the workspace\n');
  });
});
