import { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import {
  type CreateTrainingJobCommandInput,
  type DescribeTrainingJobCommandOutput,
  SageMakerClient,
  SageMakerServiceException,
} from '@aws-sdk/client-sagemaker';
import {
  type AwsSageMakerScheduler,
  createAwsSageMakerScheduler,
} from '../../../lib/schedulers/aws-sagemaker/index.js';
import type { AppDef, Cfg } from '../../../lib/specs/index.js';

export const IMAGE = '123456789012.dkr.ecr.us-east-1.amazonaws.com/torchx:0.8';
export const ROLE_ARN = 'arn:aws:iam::123456789012:role/SageMakerExecution';
export const OUTPUT = 's3://ml-bucket/torchx/';
export const BASE_CFG: Cfg = { role: ROLE_ARN, output_path: OUTPUT };

/** The shell expression `${replica_id}` becomes, written out by hand. */
export const REPLICA_ID_SHELL = `$(($(sed -n 's/.*"current_host": *"algo-\\([0-9]*\\)".*/\\1/p' /opt/ml/input/config/resourceconfig.json)-1))`;

/** A scheduler with fixed ids, user and version, with real (unused) clients unless given. */
export function makeScheduler(
  options: {
    ids?: string[];
    sageMakerClient?: SageMakerClient;
    logsClient?: CloudWatchLogsClient;
    now?: number;
  } = {},
): AwsSageMakerScheduler {
  const ids = [...(options.ids ?? ['t4rcs9x6sv1m'])];
  return createAwsSageMakerScheduler(
    { sessionName: 'torchx', sleep: async () => {}, now: () => options.now ?? 1_735_800_000_000 },
    {
      sageMakerClient: options.sageMakerClient ?? new SageMakerClient({}),
      logsClient: options.logsClient ?? new CloudWatchLogsClient({}),
      defaultUser: 'alice',
      uniqueId: () => ids.shift() ?? 'x',
      throttleBaseDelayMs: 0,
    },
  );
}

/** The CreateTrainingJob input a dry run produces. */
export function createInput(
  app: AppDef,
  cfg: Cfg = BASE_CFG,
  id = 't4rcs9x6sv1m',
): CreateTrainingJobCommandInput {
  return makeScheduler({ ids: [id] }).submitDryrun(app, cfg).request.createTrainingJob;
}

/** TorchX's three tags plus the role-name tag, in order. */
export function torchxTags(appName: string, roleName: string, user = 'alice') {
  return [
    { Key: 'torchx.pytorch.org/version', Value: '0.8.0dev0' },
    { Key: 'torchx.pytorch.org/app-name', Value: appName },
    { Key: 'torchx.pytorch.org/user', Value: user },
    { Key: 'torchx.pytorch.org/role-name', Value: roleName },
  ];
}

/** An SDK service error as the SageMaker client raises it (name, fault, HTTP status). */
export function sageMakerError(name: string, message: string, status = 400): SageMakerServiceException {
  return new SageMakerServiceException({
    name,
    message,
    $fault: status >= 500 ? 'server' : 'client',
    $metadata: { httpStatusCode: status, requestId: 'req-1' },
  });
}

export const throttled = () => sageMakerError('ThrottlingException', 'Rate exceeded');
export const accessDenied = (action: string) =>
  sageMakerError(
    'AccessDeniedException',
    `User: arn:aws:sts::123456789012:assumed-role/api/fn is not authorized to perform: ${action}`,
  );

/** A DescribeTrainingJob response as the SDK returns it (Date timestamps, tag-less). */
export function describedJob(
  overrides: Partial<DescribeTrainingJobCommandOutput> = {},
): DescribeTrainingJobCommandOutput {
  return {
    $metadata: { httpStatusCode: 200 },
    TrainingJobName: 'train-t4rcs9x6sv1m',
    TrainingJobArn: 'arn:aws:sagemaker:us-east-1:123456789012:training-job/train-t4rcs9x6sv1m',
    TrainingJobStatus: 'InProgress',
    SecondaryStatus: 'Training',
    ModelArtifacts: { S3ModelArtifacts: undefined },
    AlgorithmSpecification: {
      TrainingImage: IMAGE,
      TrainingInputMode: 'File',
      ContainerEntrypoint: ['bash'],
      ContainerArguments: ['-c', 'torchrun train.py'],
    },
    RoleArn: ROLE_ARN,
    OutputDataConfig: { S3OutputPath: OUTPUT },
    ResourceConfig: { InstanceType: 'ml.p4d.24xlarge', InstanceCount: 2, VolumeSizeInGB: 30 },
    StoppingCondition: { MaxRuntimeInSeconds: 86400 },
    CreationTime: new Date('2025-01-01T09:58:00.000Z'),
    TrainingStartTime: new Date('2025-01-01T09:58:30.000Z'),
    LastModifiedTime: new Date('2025-01-01T10:00:00.000Z'),
    SecondaryStatusTransitions: [
      {
        Status: 'Starting',
        StartTime: new Date('2025-01-01T09:58:00.000Z'),
        EndTime: new Date('2025-01-01T09:59:00.000Z'),
        StatusMessage: 'Preparing the instances for training',
      },
      {
        Status: 'Training',
        StartTime: new Date('2025-01-01T10:00:00.000Z'),
        StatusMessage: 'Training image download completed. Training in progress.',
      },
    ],
    Environment: {
      TORCHX_JOB_ID: 'aws_sagemaker://torchx/train-t4rcs9x6sv1m',
      TORCHX_ROLE_IDX: '0',
      TORCHX_ROLE_NAME: 'trainer',
      TORCHX_RANK0_HOST: 'algo-1',
    },
    RetryStrategy: { MaximumRetryAttempts: 2 },
    ...overrides,
  };
}
