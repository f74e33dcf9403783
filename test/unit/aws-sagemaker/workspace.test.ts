import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { roleOfTrainingJob } from '../../../lib/schedulers/aws-sagemaker/index.js';
import {
  type AppDef,
  type JobWorkspace,
  makeAppDef,
  makeRole,
  namedResource,
  ValidationError,
} from '../../../lib/specs/index.js';
import { BASE_CFG, describedJob, IMAGE, makeScheduler, OUTPUT, ROLE_ARN, torchxTags } from './helpers.js';

const SHA = '3f2a9c0d11be4e5f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f';
const workspace = (archive = `s3://txs-ws/alice/${SHA}.tar.gz`): JobWorkspace => ({
  sha256: SHA,
  size: 1234,
  fileCount: 3,
  archive,
});

function trainer(args = ['-m', 'train', '--lr', '0.1']): AppDef {
  return makeAppDef({
    name: 'train',
    roles: [
      makeRole({
        name: 'trainer',
        image: IMAGE,
        entrypoint: 'python',
        args,
        resource: namedResource('aws_g5.xlarge'),
      }),
    ],
  });
}

const dryrun = (app: AppDef, cfg = BASE_CFG, ws = workspace()) =>
  makeScheduler().submitDryrun(app, cfg, ws).request.createTrainingJob;

function issuesOf(fn: () => unknown): { path: string; message: string }[] {
  try {
    fn();
  } catch (e) {
    if (e instanceof ValidationError) return [...e.issues];
    throw e;
  }
  throw new Error('expected a ValidationError');
}

describe('aws_sagemaker with a workspace', () => {
  it('downloads the archive through its own File channel and unpacks it before the entrypoint runs', () => {
    expect(dryrun(trainer())).toStrictEqual({
      TrainingJobName: 'train-t4rcs9x6sv1m',
      AlgorithmSpecification: {
        TrainingImage: IMAGE,
        TrainingInputMode: 'File',
        ContainerEntrypoint: [
          'sh',
          '-c',
          'tar -xzf "$0" && exec "$@"',
          `/opt/ml/input/data/txs-workspace/${SHA}.tar.gz`,
          'python',
        ],
        ContainerArguments: ['-m', 'train', '--lr', '0.1'],
      },
      RoleArn: ROLE_ARN,
      InputDataConfig: [
        {
          ChannelName: 'txs-workspace',
          DataSource: {
            S3DataSource: {
              S3DataType: 'S3Prefix',
              S3Uri: `s3://txs-ws/alice/${SHA}.tar.gz`,
              S3DataDistributionType: 'FullyReplicated',
            },
          },
          InputMode: 'File',
        },
      ],
      OutputDataConfig: { S3OutputPath: OUTPUT },
      ResourceConfig: { InstanceType: 'ml.g5.xlarge', InstanceCount: 1, VolumeSizeInGB: 30 },
      StoppingCondition: { MaxRuntimeInSeconds: 86400 },
      Tags: torchxTags('train', 'trainer'),
      Environment: {
        TORCHX_JOB_ID: 'aws_sagemaker://torchx/train-t4rcs9x6sv1m',
        TORCHX_ROLE_IDX: '0',
        TORCHX_ROLE_NAME: 'trainer',
        TORCHX_RANK0_HOST: 'algo-1',
      },
    });
  });

  it("adds the workspace channel after the user's inputs, in File mode whatever input_mode says", () => {
    const request = dryrun(trainer(), {
      ...BASE_CFG,
      input_mode: 'FastFile',
      inputs: { train: 's3://d/train/' },
    });
    expect(request.AlgorithmSpecification?.TrainingInputMode).toBe('FastFile');
    expect(request.InputDataConfig?.map((c) => [c.ChannelName, c.InputMode])).toEqual([
      ['train', undefined],
      ['txs-workspace', 'File'],
    ]);
  });

  it("refuses a user input named like the workspace's channel, naming it", () => {
    const issues = issuesOf(() =>
      dryrun(trainer(), { ...BASE_CFG, inputs: { 'txs-workspace': 's3://d/x/' } }),
    );
    expect(issues.map((issue) => issue.path)).toContain('cfg.inputs.txs-workspace');
  });

  it('counts the workspace channel in the 20 channels SageMaker allows', () => {
    const inputs = (n: number) =>
      Object.fromEntries(Array.from({ length: n }, (_, i) => [`c${i}`, `s3://d/${i}/`]));
    expect(() => dryrun(trainer(), { ...BASE_CFG, inputs: inputs(19) })).not.toThrow();
    expect(() => makeScheduler().submitDryrun(trainer(), { ...BASE_CFG, inputs: inputs(20) })).not.toThrow();
    const issues = issuesOf(() => dryrun(trainer(), { ...BASE_CFG, inputs: inputs(20) }));
    expect(issues.map((issue) => issue.path)).toEqual(['cfg.inputs']);
  });

  it('refuses an archive off S3 before translating, naming workspace', () => {
    const scheduler = makeScheduler();
    for (const archive of [`/var/lib/txs/workspaces/archives/${SHA}.tar.gz`, 's3://txs-ws/']) {
      expect(() => scheduler.checkWorkspace(workspace(archive))).toThrow(ValidationError);
      const issues = issuesOf(() => scheduler.submitDryrun(trainer(), BASE_CFG, workspace(archive)));
      expect(issues.map((issue) => issue.path)).toEqual(['workspace']);
    }
  });

  it('leaves a request without a workspace as it was', () => {
    const request = makeScheduler().submitDryrun(trainer(), BASE_CFG).request.createTrainingJob;
    expect(request.AlgorithmSpecification?.ContainerEntrypoint).toEqual(['python']);
    expect(request).not.toHaveProperty('InputDataConfig');
  });

  it("describes a workspace job's role with the role's own command, not the unpacking wrapper", () => {
    const spec = dryrun(trainer()).AlgorithmSpecification;
    const role = roleOfTrainingJob(describedJob({ AlgorithmSpecification: spec }), 'trainer');
    expect(role.entrypoint).toBe('python');
    expect(role.args).toEqual(['-m', 'train', '--lr', '0.1']);
  });
});

describe('aws_sagemaker workspace entrypoint, run with the real sh and tar', () => {
  const dirs: string[] = [];
  const tempDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'txs-sm-ws-'));
    dirs.push(dir);
    return dir;
  };
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('finds the archive where the channel puts it and runs the role in the unpacked workspace', () => {
    const src = tempDir();
    writeFileSync(join(src, 'run.sh'), 'echo "in workspace: $1"\n');
    const archive = join(tempDir(), 'upload.tar.gz');
    execFileSync('tar', ['-czf', archive, '-C', src, 'run.sh']);
    const spec = dryrun(trainer(['run.sh', 'arg'])).AlgorithmSpecification;
    // SageMaker downloads the channel's object under /opt/ml/input/data/<channel>/ keeping the key's last
    // segment; a directory stands in for /opt/ml.
    const optMl = tempDir();
    const channelDir = join(optMl, 'input/data/txs-workspace');
    mkdirSync(channelDir, { recursive: true });
    copyFileSync(archive, join(channelDir, `${SHA}.tar.gz`));
    const command = [...(spec?.ContainerEntrypoint ?? []), ...(spec?.ContainerArguments ?? [])].map((arg) =>
      arg.replace('/opt/ml', optMl),
    );
    command[4] = 'sh'; // the image's interpreter: this machine's sh stands in for python
    const [file, ...args] = command;
    expect(execFileSync(file as string, args, { cwd: tempDir(), encoding: 'utf8' })).toBe(
      'in workspace: arg\n',
    );
  });
});
