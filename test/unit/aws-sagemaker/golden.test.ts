/**
 * Golden tests: AppDefs (every builtin component among them) and the exact CreateTrainingJob input each
 * becomes. Every expected object is written out by hand.
 */
import { describe, expect, it } from 'vitest';
import { materializeComponent } from '../../../lib/components/index.js';
import { TORCHX_VERSION_TAG_VALUE } from '../../../lib/schedulers/aws-batch/index.js';
import { type AppDef, makeAppDef, makeResource, makeRole, namedResource } from '../../../lib/specs/index.js';
import { BASE_CFG, createInput, IMAGE, OUTPUT, REPLICA_ID_SHELL, ROLE_ARN, torchxTags } from './helpers.js';

const env = (jobName: string, roleName: string) => ({
  TORCHX_JOB_ID: `aws_sagemaker://torchx/${jobName}`,
  TORCHX_ROLE_IDX: '0',
  TORCHX_ROLE_NAME: roleName,
  TORCHX_RANK0_HOST: 'algo-1',
});

function trainer(overrides: Partial<Parameters<typeof makeRole>[0]> = {}): AppDef {
  return makeAppDef({
    name: 'train',
    roles: [
      makeRole({
        name: 'trainer',
        image: IMAGE,
        entrypoint: 'python',
        args: ['-m', 'train'],
        resource: namedResource('aws_g5.xlarge'),
        ...overrides,
      }),
    ],
  });
}

describe('AwsSageMakerScheduler dry run (golden CreateTrainingJob inputs)', () => {
  it('utils.echo: runs the role entrypoint and args on one instance of the configured type', () => {
    const app = materializeComponent('utils.echo', ['--image', IMAGE]);
    expect(createInput(app, { ...BASE_CFG, instance_type: 'ml.m5.large' })).toStrictEqual({
      TrainingJobName: 'echo-t4rcs9x6sv1m',
      AlgorithmSpecification: {
        TrainingImage: IMAGE,
        TrainingInputMode: 'File',
        ContainerEntrypoint: ['echo'],
        ContainerArguments: ['hello world'],
      },
      RoleArn: ROLE_ARN,
      OutputDataConfig: { S3OutputPath: OUTPUT },
      ResourceConfig: { InstanceType: 'ml.m5.large', InstanceCount: 1, VolumeSizeInGB: 30 },
      StoppingCondition: { MaxRuntimeInSeconds: 86400 },
      Tags: torchxTags('echo', 'echo'),
      Environment: env('echo-t4rcs9x6sv1m', 'echo'),
    });
  });

  it('utils.sh: keeps shell variables such as $HOME untouched in the sh -c command', () => {
    const app = materializeComponent('utils.sh', ['--image', IMAGE, 'echo', '$HOME', 'done']);
    expect(createInput(app, { ...BASE_CFG, instance_type: 'ml.c5.xlarge' })).toStrictEqual({
      TrainingJobName: 'sh-t4rcs9x6sv1m',
      AlgorithmSpecification: {
        TrainingImage: IMAGE,
        TrainingInputMode: 'File',
        ContainerEntrypoint: ['sh'],
        ContainerArguments: ['-c', "echo '$HOME' done"],
      },
      RoleArn: ROLE_ARN,
      OutputDataConfig: { S3OutputPath: OUTPUT },
      ResourceConfig: { InstanceType: 'ml.c5.xlarge', InstanceCount: 1, VolumeSizeInGB: 30 },
      StoppingCondition: { MaxRuntimeInSeconds: 86400 },
      Tags: torchxTags('sh', 'sh'),
      Environment: { LOGLEVEL: 'WARNING', ...env('sh-t4rcs9x6sv1m', 'sh') },
    });
  });

  it('utils.python: sanitises torchx_utils_python into a valid job name and passes -m as arguments', () => {
    const app = materializeComponent('utils.python', [
      '--image',
      IMAGE,
      '-m',
      'pkg.main',
      '--',
      '--lr',
      '0.1',
    ]);
    expect(createInput(app, { ...BASE_CFG, instance_type: 'ml.m5.large' })).toStrictEqual({
      TrainingJobName: 'torchx-utils-python-t4rcs9x6sv1m',
      AlgorithmSpecification: {
        TrainingImage: IMAGE,
        TrainingInputMode: 'File',
        ContainerEntrypoint: ['python'],
        ContainerArguments: ['-m', 'pkg.main', '--lr', '0.1'],
      },
      RoleArn: ROLE_ARN,
      OutputDataConfig: { S3OutputPath: OUTPUT },
      ResourceConfig: { InstanceType: 'ml.m5.large', InstanceCount: 1, VolumeSizeInGB: 30 },
      StoppingCondition: { MaxRuntimeInSeconds: 86400 },
      Tags: torchxTags('torchx_utils_python', 'python'),
      Environment: { HYDRA_MAIN_MODULE: 'pkg.main', ...env('torchx-utils-python-t4rcs9x6sv1m', 'python') },
    });
  });

  it('utils.touch: one argument, default volume and runtime', () => {
    const app = materializeComponent('utils.touch', ['--image', IMAGE, '--file', '/opt/ml/output/done']);
    expect(createInput(app, { ...BASE_CFG, instance_type: 'ml.t3.medium' })).toStrictEqual({
      TrainingJobName: 'touch-t4rcs9x6sv1m',
      AlgorithmSpecification: {
        TrainingImage: IMAGE,
        TrainingInputMode: 'File',
        ContainerEntrypoint: ['touch'],
        ContainerArguments: ['/opt/ml/output/done'],
      },
      RoleArn: ROLE_ARN,
      OutputDataConfig: { S3OutputPath: OUTPUT },
      ResourceConfig: { InstanceType: 'ml.t3.medium', InstanceCount: 1, VolumeSizeInGB: 30 },
      StoppingCondition: { MaxRuntimeInSeconds: 86400 },
      Tags: torchxTags('touch', 'touch'),
      Environment: env('touch-t4rcs9x6sv1m', 'touch'),
    });
  });

  it('utils.copy: keeps the already valid torchx-utils-copy name', () => {
    const app = materializeComponent('utils.copy', [
      '--image',
      IMAGE,
      '--src',
      's3://a/b',
      '--dst',
      '/tmp/b',
    ]);
    expect(createInput(app, { ...BASE_CFG, instance_type: 'ml.m5.large' })).toStrictEqual({
      TrainingJobName: 'torchx-utils-copy-t4rcs9x6sv1m',
      AlgorithmSpecification: {
        TrainingImage: IMAGE,
        TrainingInputMode: 'File',
        ContainerEntrypoint: ['python'],
        ContainerArguments: ['-m', 'torchx.apps.utils.copy_main', '--src', 's3://a/b', '--dst', '/tmp/b'],
      },
      RoleArn: ROLE_ARN,
      OutputDataConfig: { S3OutputPath: OUTPUT },
      ResourceConfig: { InstanceType: 'ml.m5.large', InstanceCount: 1, VolumeSizeInGB: 30 },
      StoppingCondition: { MaxRuntimeInSeconds: 86400 },
      Tags: torchxTags('torchx-utils-copy', 'torchx-utils-copy'),
      Environment: env('torchx-utils-copy-t4rcs9x6sv1m', 'torchx-utils-copy'),
    });
  });

  it('utils.binary (with an image set in the AppDef): omits ContainerArguments when there are no args', () => {
    const app = materializeComponent('utils.binary', ['--entrypoint', '/usr/local/bin/train']);
    const role = app.roles[0]!;
    role.image = IMAGE;
    expect(createInput(app, { ...BASE_CFG, instance_type: 'ml.m5.large' })).toStrictEqual({
      TrainingJobName: 'torchx-utils-binary-t4rcs9x6sv1m',
      AlgorithmSpecification: {
        TrainingImage: IMAGE,
        TrainingInputMode: 'File',
        ContainerEntrypoint: ['/usr/local/bin/train'],
      },
      RoleArn: ROLE_ARN,
      OutputDataConfig: { S3OutputPath: OUTPUT },
      ResourceConfig: { InstanceType: 'ml.m5.large', InstanceCount: 1, VolumeSizeInGB: 30 },
      StoppingCondition: { MaxRuntimeInSeconds: 86400 },
      Tags: torchxTags('torchx_utils_binary', 'binary'),
      Environment: env('torchx-utils-binary-t4rcs9x6sv1m', 'binary'),
    });
  });

  it('dist.ddp on one node: resolves ${app_id} in --rdzv_id to the training job name', () => {
    const app = materializeComponent('dist.ddp', [
      '--image',
      IMAGE,
      '--script',
      'main.py',
      '--',
      '--epochs',
      '10',
    ]);
    expect(createInput(app, { ...BASE_CFG, instance_type: 'ml.m5.xlarge' })).toStrictEqual({
      TrainingJobName: 'main-t4rcs9x6sv1m',
      AlgorithmSpecification: {
        TrainingImage: IMAGE,
        TrainingInputMode: 'File',
        ContainerEntrypoint: ['bash'],
        ContainerArguments: [
          '-c',
          "torchrun --rdzv_backend c10d --rdzv_endpoint localhost:0 --rdzv_id 'main-t4rcs9x6sv1m' --nnodes 1 " +
            "--nproc_per_node 2 --tee 3 --role '' main.py --epochs 10",
        ],
      },
      RoleArn: ROLE_ARN,
      OutputDataConfig: { S3OutputPath: OUTPUT },
      ResourceConfig: { InstanceType: 'ml.m5.xlarge', InstanceCount: 1, VolumeSizeInGB: 30 },
      StoppingCondition: { MaxRuntimeInSeconds: 86400 },
      Tags: torchxTags('main', 'main'),
      Environment: {
        TORCHX_TRACKING_EXPERIMENT_NAME: 'default-experiment',
        TORCHX_TRACKING_RUN_NAME: 'main',
        LOGLEVEL: 'WARNING',
        ...env('main-t4rcs9x6sv1m', 'main'),
      },
    });
  });

  it('dist.ddp -j 2x8 on aws_p4d.24xlarge: two ml.p4d.24xlarge instances rendezvous at algo-1', () => {
    const app = materializeComponent('dist.ddp', [
      '--image',
      IMAGE,
      '-j',
      '2x8',
      '-h',
      'aws_p4d.24xlarge',
      '--script',
      'train.py',
    ]);
    expect(createInput(app)).toStrictEqual({
      TrainingJobName: 'train-t4rcs9x6sv1m',
      AlgorithmSpecification: {
        TrainingImage: IMAGE,
        TrainingInputMode: 'File',
        ContainerEntrypoint: ['bash'],
        ContainerArguments: [
          '-c',
          'torchrun --rdzv_backend c10d --rdzv_endpoint ${TORCHX_RANK0_HOST:=localhost}:29500 ' +
            "--rdzv_id 'train-t4rcs9x6sv1m' --nnodes 2 --nproc_per_node 8 --tee 3 --role '' train.py",
        ],
      },
      RoleArn: ROLE_ARN,
      OutputDataConfig: { S3OutputPath: OUTPUT },
      ResourceConfig: { InstanceType: 'ml.p4d.24xlarge', InstanceCount: 2, VolumeSizeInGB: 30 },
      StoppingCondition: { MaxRuntimeInSeconds: 86400 },
      Tags: torchxTags('train', 'train'),
      Environment: {
        TORCHX_TRACKING_EXPERIMENT_NAME: 'default-experiment',
        TORCHX_TRACKING_RUN_NAME: 'train',
        LOGLEVEL: 'WARNING',
        ...env('train-t4rcs9x6sv1m', 'train'),
      },
    });
  });

  it('dist.spmd on aws_g5.12xlarge: derives ml.g5.12xlarge and 4 processes per node from the host', () => {
    const app = materializeComponent('dist.spmd', [
      '--image',
      IMAGE,
      '-h',
      'aws_g5.12xlarge',
      '-j',
      '2',
      '-m',
      'pkg.train',
    ]);
    expect(createInput(app)).toStrictEqual({
      TrainingJobName: 'train-t4rcs9x6sv1m',
      AlgorithmSpecification: {
        TrainingImage: IMAGE,
        TrainingInputMode: 'File',
        ContainerEntrypoint: ['bash'],
        ContainerArguments: [
          '-c',
          'torchrun --rdzv_backend c10d --rdzv_endpoint ${TORCHX_RANK0_HOST:=localhost}:29500 ' +
            "--rdzv_id 'train-t4rcs9x6sv1m' --nnodes 2 --nproc_per_node 4 --tee 3 --role '' -m pkg.train",
        ],
      },
      RoleArn: ROLE_ARN,
      OutputDataConfig: { S3OutputPath: OUTPUT },
      ResourceConfig: { InstanceType: 'ml.g5.12xlarge', InstanceCount: 2, VolumeSizeInGB: 30 },
      StoppingCondition: { MaxRuntimeInSeconds: 86400 },
      Tags: torchxTags('train', 'train'),
      Environment: {
        TORCHX_TRACKING_EXPERIMENT_NAME: 'default-experiment',
        TORCHX_TRACKING_RUN_NAME: 'train',
        LOGLEVEL: 'WARNING',
        ...env('train-t4rcs9x6sv1m', 'train'),
      },
    });
  });

  it('substitutes every macro in args and env values and turns app metadata into tags', () => {
    const app = makeAppDef({
      name: 'macros',
      metadata: { team: 'vision', 'cost-center': '42' },
      roles: [
        makeRole({
          name: 'worker',
          image: IMAGE,
          entrypoint: 'bash',
          args: [
            '-c',
            'echo ${img_root}/x ${app_id} ${replica_id} $${${rank0_env}:=localhost} ${unknown} $$HOME',
          ],
          env: { RUN: '${app_id}', MASTER: '${rank0_env}' },
          numReplicas: 3,
          resource: namedResource('aws_g5.2xlarge'),
        }),
      ],
    });
    expect(createInput(app)).toStrictEqual({
      TrainingJobName: 'macros-t4rcs9x6sv1m',
      AlgorithmSpecification: {
        TrainingImage: IMAGE,
        TrainingInputMode: 'File',
        ContainerEntrypoint: ['bash'],
        ContainerArguments: [
          '-c',
          `echo /x macros-t4rcs9x6sv1m ${REPLICA_ID_SHELL} \${TORCHX_RANK0_HOST:=localhost} \${unknown} $HOME`,
        ],
      },
      RoleArn: ROLE_ARN,
      OutputDataConfig: { S3OutputPath: OUTPUT },
      ResourceConfig: { InstanceType: 'ml.g5.2xlarge', InstanceCount: 3, VolumeSizeInGB: 30 },
      StoppingCondition: { MaxRuntimeInSeconds: 86400 },
      Tags: [
        ...torchxTags('macros', 'worker'),
        { Key: 'team', Value: 'vision' },
        { Key: 'cost-center', Value: '42' },
      ],
      Environment: {
        RUN: 'macros-t4rcs9x6sv1m',
        MASTER: 'TORCHX_RANK0_HOST',
        ...env('macros-t4rcs9x6sv1m', 'worker'),
      },
    });
  });

  it('managed spot training with checkpoints: EnableManagedSpotTraining, MaxWaitTimeInSeconds, CheckpointConfig', () => {
    const cfg = {
      ...BASE_CFG,
      use_spot_instances: true,
      max_run: 7200,
      max_wait: 10800,
      checkpoint_s3_uri: 's3://ml-bucket/checkpoints/train',
      checkpoint_local_path: '/opt/ml/checkpoints',
    };
    expect(createInput(trainer(), cfg)).toStrictEqual({
      TrainingJobName: 'train-t4rcs9x6sv1m',
      AlgorithmSpecification: {
        TrainingImage: IMAGE,
        TrainingInputMode: 'File',
        ContainerEntrypoint: ['python'],
        ContainerArguments: ['-m', 'train'],
      },
      RoleArn: ROLE_ARN,
      OutputDataConfig: { S3OutputPath: OUTPUT },
      ResourceConfig: { InstanceType: 'ml.g5.xlarge', InstanceCount: 1, VolumeSizeInGB: 30 },
      StoppingCondition: { MaxRuntimeInSeconds: 7200, MaxWaitTimeInSeconds: 10800 },
      Tags: torchxTags('train', 'trainer'),
      EnableManagedSpotTraining: true,
      CheckpointConfig: { S3Uri: 's3://ml-bucket/checkpoints/train', LocalPath: '/opt/ml/checkpoints' },
      Environment: env('train-t4rcs9x6sv1m', 'trainer'),
    });
  });

  it('VPC, network isolation and inter-container encryption', () => {
    const cfg = {
      ...BASE_CFG,
      subnets: ['subnet-0a1b2c3d', 'subnet-1b2c3d4e'],
      security_group_ids: ['sg-0a1b2c3d'],
      enable_network_isolation: true,
      encrypt_inter_container_traffic: true,
    };
    expect(createInput(trainer(), cfg)).toStrictEqual({
      TrainingJobName: 'train-t4rcs9x6sv1m',
      AlgorithmSpecification: {
        TrainingImage: IMAGE,
        TrainingInputMode: 'File',
        ContainerEntrypoint: ['python'],
        ContainerArguments: ['-m', 'train'],
      },
      RoleArn: ROLE_ARN,
      OutputDataConfig: { S3OutputPath: OUTPUT },
      ResourceConfig: { InstanceType: 'ml.g5.xlarge', InstanceCount: 1, VolumeSizeInGB: 30 },
      VpcConfig: { SecurityGroupIds: ['sg-0a1b2c3d'], Subnets: ['subnet-0a1b2c3d', 'subnet-1b2c3d4e'] },
      StoppingCondition: { MaxRuntimeInSeconds: 86400 },
      Tags: torchxTags('train', 'trainer'),
      EnableNetworkIsolation: true,
      EnableInterContainerTrafficEncryption: true,
      Environment: env('train-t4rcs9x6sv1m', 'trainer'),
    });
  });

  it('storage and encryption: volume size and KMS keys, keep-alive, uncompressed output', () => {
    const cfg = {
      ...BASE_CFG,
      volume_size: 500,
      volume_kms_key: 'arn:aws:kms:us-east-1:123456789012:key/volume',
      output_kms_key: 'alias/ml-output',
      disable_output_compression: true,
      keep_alive_period_in_seconds: 1800,
    };
    expect(createInput(trainer(), cfg)).toStrictEqual({
      TrainingJobName: 'train-t4rcs9x6sv1m',
      AlgorithmSpecification: {
        TrainingImage: IMAGE,
        TrainingInputMode: 'File',
        ContainerEntrypoint: ['python'],
        ContainerArguments: ['-m', 'train'],
      },
      RoleArn: ROLE_ARN,
      OutputDataConfig: { S3OutputPath: OUTPUT, KmsKeyId: 'alias/ml-output', CompressionType: 'NONE' },
      ResourceConfig: {
        InstanceType: 'ml.g5.xlarge',
        InstanceCount: 1,
        VolumeSizeInGB: 500,
        VolumeKmsKeyId: 'arn:aws:kms:us-east-1:123456789012:key/volume',
        KeepAlivePeriodInSeconds: 1800,
      },
      StoppingCondition: { MaxRuntimeInSeconds: 86400 },
      Tags: torchxTags('train', 'trainer'),
      Environment: env('train-t4rcs9x6sv1m', 'trainer'),
    });
  });

  it('hyperparameters, cfg.environment (the role env wins) and metric definitions', () => {
    const app = trainer({ env: { LR: '0.1', SEED: '${app_id}' } });
    const cfg = {
      ...BASE_CFG,
      hyperparameters: { epochs: '10', batch_size: '64' },
      environment: { LR: '0.5', NCCL_DEBUG: 'INFO' },
      metric_definitions: [{ Name: 'loss', Regex: 'loss=([0-9.]+)' }],
      enable_sagemaker_metrics: true,
    };
    expect(createInput(app, cfg)).toStrictEqual({
      TrainingJobName: 'train-t4rcs9x6sv1m',
      HyperParameters: { epochs: '10', batch_size: '64' },
      AlgorithmSpecification: {
        TrainingImage: IMAGE,
        TrainingInputMode: 'File',
        MetricDefinitions: [{ Name: 'loss', Regex: 'loss=([0-9.]+)' }],
        EnableSageMakerMetricsTimeSeries: true,
        ContainerEntrypoint: ['python'],
        ContainerArguments: ['-m', 'train', '--epochs', '10', '--batch_size', '64'],
      },
      RoleArn: ROLE_ARN,
      OutputDataConfig: { S3OutputPath: OUTPUT },
      ResourceConfig: { InstanceType: 'ml.g5.xlarge', InstanceCount: 1, VolumeSizeInGB: 30 },
      StoppingCondition: { MaxRuntimeInSeconds: 86400 },
      Tags: torchxTags('train', 'trainer'),
      Environment: {
        NCCL_DEBUG: 'INFO',
        LR: '0.1',
        SEED: 'train-t4rcs9x6sv1m',
        ...env('train-t4rcs9x6sv1m', 'trainer'),
      },
    });
  });

  it('input channels and a model channel, FastFile input mode', () => {
    const cfg = {
      ...BASE_CFG,
      input_mode: 'FastFile',
      inputs: { train: 's3://ml-bucket/data/train/', validation: 's3://ml-bucket/data/val/' },
      model_uri: 's3://ml-bucket/models/base.tar.gz',
      model_channel_name: 'pretrained',
    };
    expect(createInput(trainer(), cfg)).toStrictEqual({
      TrainingJobName: 'train-t4rcs9x6sv1m',
      AlgorithmSpecification: {
        TrainingImage: IMAGE,
        TrainingInputMode: 'FastFile',
        ContainerEntrypoint: ['python'],
        ContainerArguments: ['-m', 'train'],
      },
      RoleArn: ROLE_ARN,
      InputDataConfig: [
        {
          ChannelName: 'train',
          DataSource: {
            S3DataSource: {
              S3DataType: 'S3Prefix',
              S3Uri: 's3://ml-bucket/data/train/',
              S3DataDistributionType: 'FullyReplicated',
            },
          },
        },
        {
          ChannelName: 'validation',
          DataSource: {
            S3DataSource: {
              S3DataType: 'S3Prefix',
              S3Uri: 's3://ml-bucket/data/val/',
              S3DataDistributionType: 'FullyReplicated',
            },
          },
        },
        {
          ChannelName: 'pretrained',
          DataSource: {
            S3DataSource: {
              S3DataType: 'S3Prefix',
              S3Uri: 's3://ml-bucket/models/base.tar.gz',
              S3DataDistributionType: 'FullyReplicated',
            },
          },
          ContentType: 'application/x-sagemaker-model',
          InputMode: 'File',
        },
      ],
      OutputDataConfig: { S3OutputPath: OUTPUT },
      ResourceConfig: { InstanceType: 'ml.g5.xlarge', InstanceCount: 1, VolumeSizeInGB: 30 },
      StoppingCondition: { MaxRuntimeInSeconds: 86400 },
      Tags: torchxTags('train', 'trainer'),
      Environment: env('train-t4rcs9x6sv1m', 'trainer'),
    });
  });

  it("maps the role's maxRetries to RetryStrategy.MaximumRetryAttempts", () => {
    expect(createInput(trainer({ maxRetries: 3 })).RetryStrategy).toStrictEqual({ MaximumRetryAttempts: 3 });
    expect(createInput(trainer({ maxRetries: 0 })).RetryStrategy).toBeUndefined();
  });

  it('max_retry_attempts overrides maxRetries', () => {
    const input = createInput(trainer({ maxRetries: 3 }), { ...BASE_CFG, max_retry_attempts: 10 });
    expect(input).toStrictEqual({
      TrainingJobName: 'train-t4rcs9x6sv1m',
      AlgorithmSpecification: {
        TrainingImage: IMAGE,
        TrainingInputMode: 'File',
        ContainerEntrypoint: ['python'],
        ContainerArguments: ['-m', 'train'],
      },
      RoleArn: ROLE_ARN,
      OutputDataConfig: { S3OutputPath: OUTPUT },
      ResourceConfig: { InstanceType: 'ml.g5.xlarge', InstanceCount: 1, VolumeSizeInGB: 30 },
      StoppingCondition: { MaxRuntimeInSeconds: 86400 },
      Tags: torchxTags('train', 'trainer'),
      Environment: env('train-t4rcs9x6sv1m', 'trainer'),
      RetryStrategy: { MaximumRetryAttempts: 10 },
    });
  });

  it('private registry in a VPC: TrainingImageConfig with the credentials provider', () => {
    const cfg = {
      ...BASE_CFG,
      training_repository_access_mode: 'Vpc',
      training_repository_credentials_provider_arn:
        'arn:aws:lambda:us-east-1:123456789012:function:registry-creds',
      subnets: ['subnet-0a1b2c3d'],
      security_group_ids: ['sg-0a1b2c3d'],
    };
    const app = trainer({ image: 'registry.internal:5000/ml/train:1' });
    expect(createInput(app, cfg)).toStrictEqual({
      TrainingJobName: 'train-t4rcs9x6sv1m',
      AlgorithmSpecification: {
        TrainingImage: 'registry.internal:5000/ml/train:1',
        TrainingInputMode: 'File',
        ContainerEntrypoint: ['python'],
        ContainerArguments: ['-m', 'train'],
        TrainingImageConfig: {
          TrainingRepositoryAccessMode: 'Vpc',
          TrainingRepositoryAuthConfig: {
            TrainingRepositoryCredentialsProviderArn:
              'arn:aws:lambda:us-east-1:123456789012:function:registry-creds',
          },
        },
      },
      RoleArn: ROLE_ARN,
      OutputDataConfig: { S3OutputPath: OUTPUT },
      ResourceConfig: { InstanceType: 'ml.g5.xlarge', InstanceCount: 1, VolumeSizeInGB: 30 },
      VpcConfig: { SecurityGroupIds: ['sg-0a1b2c3d'], Subnets: ['subnet-0a1b2c3d'] },
      StoppingCondition: { MaxRuntimeInSeconds: 86400 },
      Tags: torchxTags('train', 'trainer'),
      Environment: env('train-t4rcs9x6sv1m', 'trainer'),
    });
  });

  it('infrastructure checks and an explicitly disabled profiler', () => {
    const input = createInput(trainer(), { ...BASE_CFG, enable_infra_check: true, disable_profiler: true });
    expect(input).toStrictEqual({
      TrainingJobName: 'train-t4rcs9x6sv1m',
      AlgorithmSpecification: {
        TrainingImage: IMAGE,
        TrainingInputMode: 'File',
        ContainerEntrypoint: ['python'],
        ContainerArguments: ['-m', 'train'],
      },
      RoleArn: ROLE_ARN,
      OutputDataConfig: { S3OutputPath: OUTPUT },
      ResourceConfig: { InstanceType: 'ml.g5.xlarge', InstanceCount: 1, VolumeSizeInGB: 30 },
      StoppingCondition: { MaxRuntimeInSeconds: 86400 },
      Tags: torchxTags('train', 'trainer'),
      ProfilerConfig: { DisableProfiler: true },
      Environment: env('train-t4rcs9x6sv1m', 'trainer'),
      InfraCheckConfig: { EnableInfraCheck: true },
    });
  });

  it('base_job_name replaces the app name as the prefix, and long prefixes are cut so the suffix fits', () => {
    expect(createInput(trainer(), { ...BASE_CFG, base_job_name: 'nightly.resnet_50' }).TrainingJobName).toBe(
      'nightly-resnet-50-t4rcs9x6sv1m',
    );
    const long = trainer();
    long.name = `exp/${'a'.repeat(40)}_${'b'.repeat(40)}`;
    const input = createInput(long, BASE_CFG, 'tqsrbbl31fnwwd');
    expect(input.TrainingJobName).toBe(`exp-${'a'.repeat(40)}-bbb-tqsrbbl31fnwwd`);
    expect(input.TrainingJobName).toHaveLength(63);
    expect(input.Environment?.TORCHX_JOB_ID).toBe(
      `aws_sagemaker://torchx/exp-${'a'.repeat(40)}-bbb-tqsrbbl31fnwwd`,
    );
  });

  it('cfg.tags and app metadata follow the torchx tags; later keys replace earlier ones', () => {
    const app = trainer();
    app.metadata = { team: 'nlp', 'torchx.pytorch.org/user': 'service-account' };
    const input = createInput(app, {
      ...BASE_CFG,
      user: 'bob',
      tags: [
        { Key: 'team', Value: 'vision' },
        { Key: 'project', Value: 'p1' },
      ],
    });
    expect(input.Tags).toStrictEqual([
      { Key: 'torchx.pytorch.org/version', Value: '0.8.0dev0' },
      { Key: 'torchx.pytorch.org/app-name', Value: 'train' },
      { Key: 'torchx.pytorch.org/role-name', Value: 'trainer' },
      { Key: 'project', Value: 'p1' },
      { Key: 'team', Value: 'nlp' },
      { Key: 'torchx.pytorch.org/user', Value: 'service-account' },
    ]);
  });

  it('keeps a TORCHX_JOB_ID the runner put in the role env (resolving ${app_id})', () => {
    const app = trainer({ env: { TORCHX_JOB_ID: 'aws_sagemaker://research/${app_id}' } });
    expect(createInput(app).Environment).toStrictEqual({
      TORCHX_JOB_ID: 'aws_sagemaker://research/train-t4rcs9x6sv1m',
      TORCHX_ROLE_IDX: '0',
      TORCHX_ROLE_NAME: 'trainer',
      TORCHX_RANK0_HOST: 'algo-1',
    });
  });

  it('an explicit instance_type wins over the resource, and instance types newer than the SDK model are accepted', () => {
    const input = createInput(trainer({ numReplicas: 4 }), { ...BASE_CFG, instance_type: 'ml.p7.96xlarge' });
    expect(input.ResourceConfig).toStrictEqual({
      InstanceType: 'ml.p7.96xlarge',
      InstanceCount: 4,
      VolumeSizeInGB: 30,
    });
  });

  it('accepts camelCase option names and a matching instance_count', () => {
    const app = trainer({ numReplicas: 2, resource: makeResource({ cpu: 4, gpu: 1, memMB: 16_000 }) });
    const input = createInput(app, {
      role: ROLE_ARN,
      outputPath: OUTPUT,
      instanceType: 'ml.g5.xlarge',
      instanceCount: 2,
      maxRun: 3600,
    });
    expect(input.OutputDataConfig).toStrictEqual({ S3OutputPath: OUTPUT });
    expect(input.ResourceConfig).toStrictEqual({
      InstanceType: 'ml.g5.xlarge',
      InstanceCount: 2,
      VolumeSizeInGB: 30,
    });
    expect(input.StoppingCondition).toStrictEqual({ MaxRuntimeInSeconds: 3600 });
  });

  it('emits the request keys in the order of the API reference', () => {
    const input = createInput(trainer({ maxRetries: 1 }), {
      ...BASE_CFG,
      hyperparameters: { a: '1' },
      inputs: { train: 's3://b/t' },
      subnets: ['subnet-1'],
      security_group_ids: ['sg-1'],
      use_spot_instances: true,
      max_wait: 90000,
      checkpoint_s3_uri: 's3://b/c',
      enable_network_isolation: true,
      encrypt_inter_container_traffic: true,
      disable_profiler: true,
      enable_infra_check: false,
    });
    expect(Object.keys(input)).toStrictEqual([
      'TrainingJobName',
      'HyperParameters',
      'AlgorithmSpecification',
      'RoleArn',
      'InputDataConfig',
      'OutputDataConfig',
      'ResourceConfig',
      'VpcConfig',
      'StoppingCondition',
      'Tags',
      'EnableNetworkIsolation',
      'EnableInterContainerTrafficEncryption',
      'EnableManagedSpotTraining',
      'CheckpointConfig',
      'ProfilerConfig',
      'Environment',
      'RetryStrategy',
      'InfraCheckConfig',
    ]);
    expect(input.InfraCheckConfig).toStrictEqual({ EnableInfraCheck: false });
  });

  it('does not modify the AppDef it is given', () => {
    const app = materializeComponent('dist.ddp', [
      '--image',
      IMAGE,
      '-j',
      '2x8',
      '-h',
      'aws_p4d.24xlarge',
      '--script',
      't.py',
    ]);
    const before = structuredClone(app);
    createInput(app);
    expect(app).toStrictEqual(before);
  });
});

describe('cfg.hyperparameters on the command line (TorchX parity)', () => {
  it("merges them with the role's --key value arguments, the role's value winning, as TorchX did", () => {
    const app = trainer({ entrypoint: 'python', args: ['train.py', '--lr', '0.1'] });
    const input = createInput(app, { ...BASE_CFG, hyperparameters: { lr: '0.01', warmup: '100' } });
    expect(input.AlgorithmSpecification?.ContainerArguments).toEqual([
      'train.py',
      '--lr',
      '0.1',
      '--warmup',
      '100',
    ]);
    expect(input.HyperParameters).toEqual({ lr: '0.1', warmup: '100' });
  });

  it('appends them inside a bash -c command, shell-quoted', () => {
    const app = trainer({
      entrypoint: 'bash',
      args: ['-c', 'torchrun --nproc_per_node 1 train.py --lr=0.1'],
    });
    const input = createInput(app, { ...BASE_CFG, hyperparameters: { lr: '0.01', note: 'a b' } });
    expect(input.AlgorithmSpecification?.ContainerArguments).toEqual([
      '-c',
      "torchrun --nproc_per_node 1 train.py --lr=0.1 --note 'a b'",
    ]);
    expect(input.HyperParameters).toEqual({ lr: '0.1', note: 'a b' });
  });
});

describe('torchx.pytorch.org/version', () => {
  it('is the value TorchX 0.8.0dev0 writes, the same as on Batch', () => {
    const input = createInput(trainer());
    expect(input.Tags?.find((t) => t.Key === 'torchx.pytorch.org/version')?.Value).toBe(
      TORCHX_VERSION_TAG_VALUE,
    );
    expect(TORCHX_VERSION_TAG_VALUE).toBe('0.8.0dev0');
  });
});
