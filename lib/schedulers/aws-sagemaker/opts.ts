/**
 * The run options ("cfg") of the `aws_sagemaker` scheduler: TorchX's option names where they still mean
 * something without the SageMaker Python SDK, plus `inputs`, and the SDK-only options that are rejected
 * with a hint.
 *
 * @module
 */
import { type Cfg, RunOpts, snakeToCamel } from '../../specs/index.js';

/** Default `volume_size` in GB (the Python SDK's default). */
export const DEFAULT_VOLUME_SIZE_GB = 30;
/** Default `max_run` in seconds: one day (the Python SDK's and the API's default). */
export const DEFAULT_MAX_RUN_SECONDS = 86_400;
/** Default `input_mode`. */
export const DEFAULT_INPUT_MODE = 'File';
/** Default `model_channel_name`. */
export const DEFAULT_MODEL_CHANNEL_NAME = 'model';

/**
 * Resolved options of the `aws_sagemaker` scheduler (snake_case keys, as in TorchX). `null` means unset.
 */
export type AwsSageMakerOpts = {
  role: string;
  output_path: string;
  instance_type: string | null;
  instance_count: number | null;
  user: string;
  base_job_name: string | null;
  volume_size: number;
  volume_kms_key: string | null;
  keep_alive_period_in_seconds: number | null;
  max_run: number;
  max_wait: number | null;
  use_spot_instances: boolean;
  input_mode: string;
  inputs: Record<string, string> | null;
  model_uri: string | null;
  model_channel_name: string;
  output_kms_key: string | null;
  disable_output_compression: boolean;
  checkpoint_s3_uri: string | null;
  checkpoint_local_path: string | null;
  subnets: string[] | null;
  security_group_ids: string[] | null;
  tags: Record<string, string>[] | null;
  environment: Record<string, string> | null;
  hyperparameters: Record<string, string> | null;
  metric_definitions: Record<string, string>[] | null;
  enable_sagemaker_metrics: boolean | null;
  enable_network_isolation: boolean;
  encrypt_inter_container_traffic: boolean;
  max_retry_attempts: number | null;
  training_repository_access_mode: string | null;
  training_repository_credentials_provider_arn: string | null;
  enable_infra_check: boolean | null;
  disable_profiler: boolean | null;
  debugger_hook_config: boolean | null;
  [key: string]: Cfg[string];
};

/**
 * Builds the option declarations. `defaultUser` is the value of `user` when none is given.
 *
 * @example
 * ```ts
 * const opts = sageMakerRunOpts('alice');
 * opts.resolve({ role: 'arn:aws:iam::123456789012:role/SageMaker', output_path: 's3://bucket/out' });
 * ```
 */
export function sageMakerRunOpts(defaultUser: string): RunOpts {
  return new RunOpts()
    .add('role', {
      type: 'str',
      required: true,
      help:
        'ARN of the IAM execution role SageMaker assumes to run the job (pull the image, read inputs, ' +
        'write output and logs), e.g. arn:aws:iam::123456789012:role/SageMakerExecution. A bare role name ' +
        'is not accepted: its ARN needs the account id.',
    })
    .add('output_path', {
      type: 'str',
      required: true,
      help: 'S3 URI under which SageMaker uploads /opt/ml/model and /opt/ml/output, e.g. s3://my-bucket/torchx/.',
    })
    .add('instance_type', {
      type: 'str',
      help:
        "ML instance type, e.g. ml.g5.12xlarge. Defaults to ml.<type> of the role's named AWS resource " +
        '(aws_g5.12xlarge → ml.g5.12xlarge); required when the role has no such resource.',
    })
    .add('instance_count', {
      type: 'int',
      help: "Number of instances. Defaults to the role's numReplicas and must agree with it when given.",
    })
    .add('user', {
      type: 'str',
      default: defaultUser,
      help: 'User name written to the torchx.pytorch.org/user tag.',
    })
    .add('base_job_name', {
      type: 'str',
      help: 'Prefix of the training job name instead of the app name; a random suffix is always appended.',
    })
    .add('volume_size', {
      type: 'int',
      default: DEFAULT_VOLUME_SIZE_GB,
      help: 'Size in GB of the EBS volume attached to each instance (ignored by instances with NVMe storage).',
    })
    .add('volume_kms_key', {
      type: 'str',
      help: 'KMS key id or ARN that encrypts the attached storage volume.',
    })
    .add('keep_alive_period_in_seconds', {
      type: 'int',
      help: 'Keep the instances in a warm pool this long (0–21600 s) after the job ends, for the next job.',
    })
    .add('max_run', {
      type: 'int',
      default: DEFAULT_MAX_RUN_SECONDS,
      help: 'Longest the job may run, in seconds (at most 28 days); SageMaker stops it after that.',
    })
    .add('max_wait', {
      type: 'int',
      help: 'With use_spot_instances: longest to wait for spot capacity plus run time, in seconds (≥ max_run).',
    })
    .add('use_spot_instances', {
      type: 'bool',
      default: false,
      help: 'Run on managed spot capacity (cheaper, may be interrupted); requires max_wait.',
    })
    .add('input_mode', {
      type: 'str',
      default: DEFAULT_INPUT_MODE,
      help: 'How input channels reach the container: File, FastFile or Pipe.',
    })
    .add('inputs', {
      type: 'dict[str,str]',
      help:
        'Input channels: channel name → S3 URI, mounted under /opt/ml/input/data/<channel> ' +
        '(e.g. train:s3://bucket/data/train). A torchx-serverless addition.',
    })
    .add('model_uri', {
      type: 'str',
      help: 'S3 URI of a pre-trained model, delivered as the input channel named by model_channel_name.',
    })
    .add('model_channel_name', {
      type: 'str',
      default: DEFAULT_MODEL_CHANNEL_NAME,
      help: 'Channel name of model_uri.',
    })
    .add('output_kms_key', {
      type: 'str',
      help: 'KMS key id or ARN that encrypts the output uploaded to output_path.',
    })
    .add('disable_output_compression', {
      type: 'bool',
      default: false,
      help: 'Upload the model directory as is instead of as model.tar.gz.',
    })
    .add('checkpoint_s3_uri', {
      type: 'str',
      help: 'S3 URI that SageMaker keeps in sync with checkpoint_local_path (for spot and retries).',
    })
    .add('checkpoint_local_path', {
      type: 'str',
      help: 'Directory in the container synced with checkpoint_s3_uri (SageMaker default /opt/ml/checkpoints).',
    })
    .add('subnets', {
      type: 'list[str]',
      help: 'VPC subnet ids to run in (1–16); give security_group_ids too.',
    })
    .add('security_group_ids', {
      type: 'list[str]',
      help: 'VPC security group ids (1–5); give subnets too.',
    })
    .add('tags', {
      type: 'list[dict[str,str]]',
      help: 'Extra tags, as [{"Key": "team", "Value": "ml"}]; app metadata is added as tags too.',
    })
    .add('environment', {
      type: 'dict[str,str]',
      help: "Extra environment variables; the role's env wins on conflicts.",
    })
    .add('hyperparameters', {
      type: 'dict[str,str]',
      help:
        "Hyperparameters, passed to the script as TorchX did: each one the role's arguments do not give is " +
        'appended to the command line as --key value (the role wins), and all are written to ' +
        '/opt/ml/input/config/hyperparameters.json with the values the command line has.',
    })
    .add('metric_definitions', {
      type: 'list[dict[str,str]]',
      help: 'Metrics parsed from the logs, as [{"Name": "loss", "Regex": "loss=([0-9.]+)"}] (at most 40).',
    })
    .add('enable_sagemaker_metrics', {
      type: 'bool',
      help: 'Publish metric_definitions as SageMaker time-series metrics.',
    })
    .add('enable_network_isolation', {
      type: 'bool',
      default: false,
      help: 'Run the container without network access (inputs and outputs still flow through SageMaker).',
    })
    .add('encrypt_inter_container_traffic', {
      type: 'bool',
      default: false,
      help: 'Encrypt traffic between the instances of a distributed job.',
    })
    .add('max_retry_attempts', {
      type: 'int',
      help:
        "Times SageMaker retries the job after an internal error (1–30). Defaults to the role's maxRetries " +
        'when that is above 0. SageMaker does not retry jobs whose own code failed.',
    })
    .add('training_repository_access_mode', {
      type: 'str',
      help: 'Where the image is pulled from: Platform (Amazon ECR, default) or Vpc (a private registry in your VPC).',
    })
    .add('training_repository_credentials_provider_arn', {
      type: 'str',
      help: 'With training_repository_access_mode=Vpc: ARN of the Lambda function that returns registry credentials.',
    })
    .add('enable_infra_check', {
      type: 'bool',
      help: 'Run SageMaker infrastructure health checks on the instances before the job starts.',
    })
    .add('disable_profiler', {
      type: 'bool',
      help: 'Explicitly turn SageMaker Profiler off (no profiler is configured unless asked).',
    })
    .add('debugger_hook_config', {
      type: 'bool',
      help: 'Accepted for TorchX compatibility: only false (no SageMaker Debugger hook) is supported.',
    });
}

/**
 * Options of TorchX's SageMaker scheduler that only made sense with the Python SDK (which uploaded code
 * and generated configuration). Giving one is an error with the hint below.
 */
export const SDK_ONLY_OPTIONS: Readonly<Record<string, string>> = {
  source_dir:
    'code upload needs the SageMaker Python SDK; bake your code into the image, or ship it through an ' +
    'input channel (cfg.inputs) and run it with utils.python --script /opt/ml/input/data/<channel>/train.py',
  dependencies:
    'code upload needs the SageMaker Python SDK; install dependencies in the image (or use an input channel via cfg.inputs)',
  git_config:
    'cloning code needs the SageMaker Python SDK; bake the repository into the image, or clone it in the entrypoint',
  code_location:
    'code upload needs the SageMaker Python SDK; bake your code into the image, or use an input channel (cfg.inputs)',
  entry_point:
    "the container runs the role's entrypoint and args; set them in the AppDef (e.g. utils.python -m pkg.train)",
  image_uri: "the image is the role's image; set it in the AppDef (e.g. --image for builtin components)",
  distribution:
    'distribution is not configured by SageMaker here; use dist.ddp, which runs torchrun on every instance',
  container_log_level:
    'this option only configured the SDK framework containers; set env SAGEMAKER_CONTAINER_LOG_LEVEL in the role instead',
  image_repo:
    'local images are not pushed by torchx-serverless; push the image to Amazon ECR and use its URI as the role image',
};

/** `[spelling, snake_case name]` of every SDK-only option: its name, then its camelCase form if different. */
const SDK_ONLY_SPELLINGS: readonly (readonly [string, string])[] = Object.keys(SDK_ONLY_OPTIONS).flatMap(
  (name) => [...new Set([name, snakeToCamel(name)])].map((spelling) => [spelling, name] as const),
);

/**
 * The SDK-only options present (non-null) in `cfg`, under their snake_case or camelCase spelling.
 *
 * @returns `[spelling used, snake_case name]` pairs.
 */
export function sdkOnlyOptionsIn(cfg: Readonly<Cfg>): [string, string][] {
  const found: [string, string][] = [];
  for (const [spelling, name] of SDK_ONLY_SPELLINGS) {
    const value = cfg[spelling];
    if (value !== undefined && value !== null) found.push([spelling, name]);
  }
  return found;
}
