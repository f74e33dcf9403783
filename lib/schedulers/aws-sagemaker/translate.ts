/**
 * Pure translation of an AppDef and resolved options into a SageMaker `CreateTrainingJob` request, with
 * every API rule checked first so that a bad request is rejected with the field to fix, before anything is
 * sent. No SDK call happens here.
 *
 * @module
 */
import type {
  AlgorithmSpecification,
  Channel,
  CheckpointConfig,
  CreateTrainingJobCommandInput,
  MetricDefinition,
  OutputDataConfig,
  ResourceConfig,
  StoppingCondition,
  Tag,
  TrainingInputMode,
  TrainingRepositoryAccessMode,
} from '@aws-sdk/client-sagemaker';
import { TrainingInstanceType } from '@aws-sdk/client-sagemaker';
import {
  type AppDef,
  applyMacros,
  type FieldIssue,
  INSTANCE_TYPE_CAPABILITY,
  type JobWorkspace,
  MISSING,
  makeAppHandle,
  NONE,
  type Role,
  ValidationError,
} from '../../specs/index.js';
import { isIamRoleArn, isS3Uri } from '../aws-names.js';
import { AppNotSupportedError, InstanceTypeNotAllowedError } from '../errors.js';
import type { S3Archive } from '../s3-workspace.js';
import { mergeHyperParameters } from './hyperparameters.js';
import { MAX_TRAINING_JOB_NAME_LENGTH, TRAINING_JOB_NAME_PATTERN, trainingJobName } from './names.js';
import { type AwsSageMakerOpts, SDK_ONLY_OPTIONS, sdkOnlyOptionsIn } from './opts.js';
import { ROLE_NAME_ENV, ROLE_NAME_TAG } from './state.js';
import { runInWorkspace, sageMakerArchiveOf, WORKSPACE_CHANNEL, workspaceChannelOf } from './workspace.js';

/** The native request of the `aws_sagemaker` scheduler: the exact `CreateTrainingJob` input. */
export interface AwsSageMakerRequest {
  createTrainingJob: CreateTrainingJobCommandInput;
}

/** Name of the environment variable that holds the first host's name; `${rank0_env}` resolves to it. */
export const RANK0_HOST_ENV = 'TORCHX_RANK0_HOST';
/** Host name of the first instance of a SageMaker training cluster. */
export const RANK0_HOST = 'algo-1';

/**
 * What `${replica_id}` becomes: a POSIX shell expression that evaluates to this instance's index
 * (0 … N-1), read from `current_host` (`algo-<index+1>`) in /opt/ml/input/config/resourceconfig.json.
 * Like `$AWS_BATCH_JOB_NODE_INDEX` on AWS Batch, it only works where a shell evaluates the argument
 * (e.g. `sh -c`), and needs `sed` in the image.
 */
export const REPLICA_ID_EXPRESSION =
  '$(($(sed -n \'s/.*"current_host": *"algo-\\([0-9]*\\)".*/\\1/p\' /opt/ml/input/config/resourceconfig.json)-1))';

/** Tag holding the torchx(-serverless) version; `list` recognises our jobs by it. */
export const VERSION_TAG = 'torchx.pytorch.org/version';
/** Tag holding the app's name. */
export const APP_NAME_TAG = 'torchx.pytorch.org/app-name';
/** Tag holding the `user` option. */
export const USER_TAG = 'torchx.pytorch.org/user';

/** API limits (botocore service model `sagemaker/2017-07-24`, see docs/schedulers/aws-sagemaker.md). */
export const SAGEMAKER_LIMITS = {
  maxRuntimeSeconds: 28 * 24 * 3600,
  keepAliveSeconds: 21_600,
  retryAttempts: 30,
  environmentEntries: 100,
  environmentKeyLength: 512,
  environmentValueLength: 512,
  hyperParameters: 100,
  hyperParameterKeyLength: 256,
  hyperParameterValueLength: 2_500,
  containerItems: 100,
  containerItemLength: 256,
  tags: 50,
  tagKeyLength: 128,
  tagValueLength: 256,
  metricDefinitions: 40,
  metricNameLength: 255,
  metricRegexLength: 500,
  channels: 20,
  s3UriLength: 1_024,
  imageLength: 255,
  kmsKeyLength: 2_048,
  subnets: 16,
  securityGroups: 5,
  subnetOrGroupLength: 32,
  roleArnLength: 2_048,
} as const;

const KMS_KEY_PATTERN = /^[a-zA-Z0-9:/_-]*$/;
const ENV_KEY_PATTERN = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TAG_PATTERN = /^[\p{L}\p{Z}\p{N}_.:/=+\-@]*$/u;
const CHANNEL_NAME_PATTERN = /^[A-Za-z0-9.\-_]{1,64}$/;
const VPC_ID_PATTERN = /^[-0-9a-zA-Z]+$/;
const LAMBDA_ARN_PATTERN = /^arn:[A-Za-z0-9-]+:lambda:[A-Za-z0-9-]+:[0-9]{12}:function:.*$/;
const INSTANCE_TYPE_PATTERN = /^ml\.[a-z0-9]+(-[a-z0-9]+)*\.[a-z0-9]+$/;

const INPUT_MODES: readonly TrainingInputMode[] = ['File', 'FastFile', 'Pipe'];
const ACCESS_MODES: readonly TrainingRepositoryAccessMode[] = ['Platform', 'Vpc'];

/** Instance types the installed SDK's model lists for training. Newer types are accepted too when well formed. */
export const KNOWN_TRAINING_INSTANCE_TYPES: ReadonlySet<string> = new Set(
  Object.values(TrainingInstanceType),
);

/** Inputs of {@link translateApp} besides the app and the options. */
export interface TranslateContext {
  /** Scheduler name, for `TORCHX_JOB_ID` (`aws_sagemaker://<session>/<job name>`). */
  backend: string;
  sessionName: string;
  /** The unique suffix of the job name. */
  uniqueId: string;
  /**
   * Check the lengths the job name affects (arguments, env values, hyperparameters holding `${app_id}`) as if
   * the suffix were this one (the longest), so that the checks hold whatever suffix a run gets.
   */
  lengthsForId?: string;
  /** Value of the `torchx.pytorch.org/version` tag. */
  version: string;
  /** Tags the job gets after all others (a deployed stack's tag); none by default, so dry runs match TorchX. */
  stackTags?: Readonly<Record<string, string>>;
  /** Instance types the deployment allows; any when undefined. */
  allowedInstanceTypes?: readonly string[];
}

/** The deployment setting that widens {@link TranslateContext.allowedInstanceTypes}, quoted in refusals. */
export const INSTANCE_TYPES_SETTING = "the construct's sageMakerInstanceTypes (TXS_SAGEMAKER_INSTANCE_TYPES)";

/** Collects field issues so that one error lists every problem. */
class Issues {
  readonly list: FieldIssue[] = [];
  add(path: string, message: string): void {
    this.list.push({ path, message });
  }
  throwIfAny(): void {
    if (this.list.length === 0) return;
    const summary = this.list.map((i) => `${i.path}: ${i.message}`).join('; ');
    throw new ValidationError(`The app cannot run on SageMaker: ${summary}`, this.list);
  }
}

/**
 * Checks the app's shape: exactly one role, no mounts.
 *
 * @throws ValidationError for an app without roles; AppNotSupportedError for several roles or mounts.
 */
function checkAppShape(app: AppDef): Role {
  const [role, ...others] = app.roles;
  if (role === undefined) {
    throw ValidationError.forField('app.roles', 'an app needs one role to run on SageMaker');
  }
  if (others.length > 0) {
    const message =
      `SageMaker runs one homogeneous cluster (one image and command on every instance), but the app has ` +
      `${app.roles.length} roles (${app.roles.map((r) => r.name).join(', ')}). Run each role as its own app, ` +
      'or use aws_batch, which runs up to 5 roles as node groups of one job';
    throw new AppNotSupportedError(message, [{ path: 'app.roles', message }]);
  }
  if (role.mounts.length > 0) {
    const message =
      'SageMaker training jobs have no bind, volume or device mounts, and torchx-serverless maps none of them. ' +
      'Remove the mounts: read data ' +
      'from S3 input channels (cfg.inputs, mounted under /opt/ml/input/data/<channel>) and write results to ' +
      '/opt/ml/model or /opt/ml/output (uploaded to cfg.output_path)';
    throw new AppNotSupportedError(message, [{ path: 'app.roles.0.mounts', message }]);
  }
  return role;
}

function closestInstanceTypes(value: string): string[] {
  const bare = value.replace(/^(ml\.|aws_)/, '');
  const direct = `ml.${bare}`;
  if (KNOWN_TRAINING_INSTANCE_TYPES.has(direct)) return [direct];
  const family = bare.split('.')[0] ?? '';
  return [...KNOWN_TRAINING_INSTANCE_TYPES].filter((t) => t.startsWith(`ml.${family}.`)).slice(0, 5);
}

function resolveInstanceType(role: Role, cfg: AwsSageMakerOpts, issues: Issues): string {
  if (cfg.instance_type !== null) {
    const value = cfg.instance_type;
    if (!INSTANCE_TYPE_PATTERN.test(value)) {
      const suggestions = closestInstanceTypes(value);
      const hint = suggestions.length > 0 ? ` Did you mean: ${suggestions.join(', ')}?` : '';
      issues.add(
        'cfg.instance_type',
        `'${value}' is not a SageMaker ML instance type; they look like ml.<family>.<size>, e.g. ml.g5.xlarge.${hint}`,
      );
    }
    return value;
  }
  const capability = role.resource.capabilities[INSTANCE_TYPE_CAPABILITY];
  if (typeof capability !== 'string' || capability === '') {
    issues.add(
      'cfg.instance_type',
      'is required because app.roles.0.resource names no instance type: set instance_type (e.g. ml.g5.xlarge) ' +
        'or give the role a named AWS resource such as aws_g5.xlarge',
    );
    return '';
  }
  const derived = capability.startsWith('ml.') ? capability : `ml.${capability}`;
  if (!KNOWN_TRAINING_INSTANCE_TYPES.has(derived)) {
    issues.add(
      'app.roles.0.resource',
      `instance type ${capability} maps to ${derived}, which SageMaker does not offer for training; ` +
        'set cfg.instance_type to a training instance type (e.g. ml.g5.xlarge)',
    );
  }
  return derived;
}

function checkRange(
  issues: Issues,
  path: string,
  value: number | null,
  min: number,
  max: number | undefined,
  what: string,
): void {
  if (value === null) return;
  if (!Number.isInteger(value) || value < min || (max !== undefined && value > max)) {
    const range = max === undefined ? `at least ${min}` : `between ${min} and ${max}`;
    issues.add(path, `must be an integer ${range} (${what}); got ${value}`);
  }
}

function checkS3Uri(issues: Issues, path: string, value: string | null, example: string): void {
  if (value === null) return;
  if (!isS3Uri(value)) {
    issues.add(path, `must be an S3 URI of at most 1024 characters, e.g. ${example}; got '${value}'`);
  }
}

function checkKmsKey(issues: Issues, path: string, value: string | null): void {
  if (value === null) return;
  if (!KMS_KEY_PATTERN.test(value) || value.length > SAGEMAKER_LIMITS.kmsKeyLength) {
    issues.add(path, 'must be a KMS key id, alias or ARN (letters, digits, ":", "/", "_", "-")');
  }
}

function checkRoleArn(issues: Issues, roleArn: string): void {
  if (isIamRoleArn(roleArn)) return;
  const looksLikeName = !roleArn.startsWith('arn:') && /^[\w+=,.@/-]+$/.test(roleArn);
  issues.add(
    'cfg.role',
    looksLikeName
      ? `'${roleArn}' looks like a role name; SageMaker needs the role ARN and the account id cannot be ` +
          `derived here: use arn:aws:iam::<account id>:role/${roleArn.replace(/^\/+/, '')}`
      : `'${roleArn}' is not an IAM role ARN; use arn:aws:iam::<12-digit account id>:role/<name>`,
  );
}

function checkTag(issues: Issues, path: string, key: string, value: string): void {
  if (key.length < 1 || key.length > SAGEMAKER_LIMITS.tagKeyLength || !TAG_PATTERN.test(key)) {
    issues.add(path, `tag key '${key}' must be 1–128 letters, digits, spaces or _ . : / = + - @`);
  } else if (key.toLowerCase().startsWith('aws:')) {
    issues.add(path, `tag key '${key}' uses the reserved prefix aws:`);
  }
  if (value.length > SAGEMAKER_LIMITS.tagValueLength || !TAG_PATTERN.test(value)) {
    issues.add(path, `tag value for '${key}' must be at most 256 letters, digits, spaces or _ . : / = + - @`);
  }
}

function buildTags(
  app: AppDef,
  role: Role,
  cfg: AwsSageMakerOpts,
  context: TranslateContext,
  issues: Issues,
): Tag[] {
  const { version } = context;
  const tags = new Map<string, { value: string; path: string }>();
  const put = (key: string, value: string, path: string) => {
    tags.delete(key);
    tags.set(key, { value, path });
  };
  put(VERSION_TAG, version, 'tags');
  put(APP_NAME_TAG, app.name, 'app.name');
  put(USER_TAG, cfg.user, 'cfg.user');
  put(ROLE_NAME_TAG, role.name, 'app.roles.0.name');
  (cfg.tags ?? []).forEach((tag, i) => {
    const extra = Object.keys(tag).filter((k) => k !== 'Key' && k !== 'Value');
    if (tag.Key === undefined || extra.length > 0) {
      issues.add(`cfg.tags.${i}`, 'each tag must be {"Key": "...", "Value": "..."} (Value may be omitted)');
      return;
    }
    put(tag.Key, tag.Value ?? '', `cfg.tags.${i}`);
  });
  for (const [key, value] of Object.entries(app.metadata)) put(key, value, `app.metadata.${key}`);
  for (const [key, value] of Object.entries(context.stackTags ?? {})) put(key, value, 'tags');
  for (const [key, { value, path }] of tags) checkTag(issues, path, key, value);
  if (tags.size > SAGEMAKER_LIMITS.tags) {
    issues.add(
      'cfg.tags',
      `the job would carry ${tags.size} tags (4 torchx tags + cfg.tags + app.metadata); SageMaker allows at most 50`,
    );
  }
  return [...tags].map(([Key, { value }]) => ({ Key, Value: value }));
}

/** The length a string has for the checks (see {@link TranslateContext.lengthsForId}). */
type CheckedLength = (text: string) => number;

function buildEnvironment(
  resolvedRole: Role,
  cfg: AwsSageMakerOpts,
  jobName: string,
  context: TranslateContext,
  issues: Issues,
  lengthOf: CheckedLength,
): Record<string, string> {
  const env: Record<string, string> = {};
  const source: Record<string, string> = {};
  for (const [key, value] of Object.entries(cfg.environment ?? {})) {
    env[key] = value;
    source[key] = `cfg.environment.${key}`;
  }
  for (const [key, value] of Object.entries(resolvedRole.env)) {
    delete env[key];
    env[key] = value;
    source[key] = `app.roles.0.env.${key}`;
  }
  if (env.TORCHX_JOB_ID === undefined) {
    env.TORCHX_JOB_ID = makeAppHandle(context.backend, context.sessionName, jobName);
  }
  const scheduler: Record<string, string> = {
    TORCHX_ROLE_IDX: '0',
    [ROLE_NAME_ENV]: resolvedRole.name,
    [RANK0_HOST_ENV]: RANK0_HOST,
  };
  for (const [key, value] of Object.entries(scheduler)) {
    delete env[key];
    env[key] = value;
  }
  const entries = Object.entries(env);
  if (entries.length > SAGEMAKER_LIMITS.environmentEntries) {
    issues.add(
      'app.roles.0.env',
      `the job would have ${entries.length} environment variables (role env + cfg.environment + 4 set by ` +
        'torchx-serverless); SageMaker allows at most 100. Move settings into a config file or hyperparameters',
    );
  }
  for (const [key, value] of entries) {
    const path = source[key] ?? 'app.roles.0.env';
    if (!ENV_KEY_PATTERN.test(key) || key.length > SAGEMAKER_LIMITS.environmentKeyLength) {
      issues.add(
        path,
        `environment variable name '${key}' must match [a-zA-Z_][a-zA-Z0-9_]* (at most 512 characters)`,
      );
    }
    if (lengthOf(value) > SAGEMAKER_LIMITS.environmentValueLength) {
      issues.add(
        path,
        `is ${lengthOf(value)} characters after macro substitution; SageMaker allows at most 512 per environment value`,
      );
    }
  }
  return env;
}

function checkHyperParameters(
  issues: Issues,
  hyperparameters: Record<string, string>,
  lengthOf: CheckedLength,
): void {
  const entries = Object.entries(hyperparameters);
  if (entries.length > SAGEMAKER_LIMITS.hyperParameters) {
    issues.add('cfg.hyperparameters', `has ${entries.length} entries; SageMaker allows at most 100`);
  }
  for (const [key, value] of entries) {
    if (key.length > SAGEMAKER_LIMITS.hyperParameterKeyLength) {
      issues.add(`cfg.hyperparameters.${key}`, 'key is longer than 256 characters');
    }
    if (lengthOf(value) > SAGEMAKER_LIMITS.hyperParameterValueLength) {
      issues.add(
        `cfg.hyperparameters.${key}`,
        `value is ${lengthOf(value)} characters; SageMaker allows at most 2500`,
      );
    }
  }
}

function checkContainerCommand(
  issues: Issues,
  role: Role,
  args: readonly string[],
  lengthOf: CheckedLength,
): void {
  const max = SAGEMAKER_LIMITS.containerItemLength;
  if (role.entrypoint === '' || role.entrypoint === MISSING) {
    issues.add('app.roles.0.entrypoint', 'is required: the command the container runs, e.g. python');
  } else if (role.entrypoint.length > max) {
    issues.add(
      'app.roles.0.entrypoint',
      `is ${role.entrypoint.length} characters; SageMaker allows at most ${max}`,
    );
  }
  if (args.length > SAGEMAKER_LIMITS.containerItems) {
    issues.add(
      'app.roles.0.args',
      `has ${args.length} arguments; SageMaker allows at most 100. Put the command in a script in the image`,
    );
  }
  args.forEach((arg, i) => {
    if (lengthOf(arg) > max) {
      issues.add(
        `app.roles.0.args.${i}`,
        `is ${lengthOf(arg)} characters after macro substitution; SageMaker allows at most ${max} per argument ` +
          '(long "bash -c" commands such as dist.ddp\'s torchrun line hit this). Put the command in a script ' +
          'in the image (e.g. /app/run.sh) and run that, or shorten the job name and arguments',
      );
    }
  });
}

/** A private Amazon ECR image URI (`<account>.dkr.ecr.<region>.amazonaws.com[.cn]/<repository>…`). */
export const ECR_IMAGE_PATTERN = /^\d{12}\.dkr\.ecr(-fips)?\.[a-z0-9-]+\.amazonaws\.com(\.cn)?\/[^\s]+$/;

function checkImage(issues: Issues, image: string, accessMode: string | null): void {
  if (image === '' || image === NONE || image === MISSING) {
    issues.add(
      'app.roles.0.image',
      'is required: the training image URI, e.g. 123456789012.dkr.ecr.us-east-1.amazonaws.com/train:latest',
    );
  } else if (image.startsWith('sha256:')) {
    issues.add(
      'app.roles.0.image',
      'is a local image id; SageMaker pulls images from Amazon ECR (or a private registry with ' +
        'training_repository_access_mode=Vpc): push the image and use its URI',
    );
  } else if (image.length > SAGEMAKER_LIMITS.imageLength) {
    issues.add('app.roles.0.image', `is ${image.length} characters; SageMaker allows at most 255`);
  } else if (accessMode !== 'Vpc' && !ECR_IMAGE_PATTERN.test(image)) {
    // SageMaker pulls training images only from Amazon ECR, or from a private registry reached through the
    // job's VPC (TrainingImageConfig.TrainingRepositoryAccessMode=Vpc with subnets and security groups).
    issues.add(
      'app.roles.0.image',
      `'${image}' is not an Amazon ECR image; SageMaker pulls only from ECR ` +
        '(<account>.dkr.ecr.<region>.amazonaws.com/<repo>:<tag>): push the image to ECR, or, for a private ' +
        'registry in your VPC, set training_repository_access_mode=Vpc with subnets and security_group_ids',
    );
  }
}

function buildChannels(cfg: AwsSageMakerOpts, issues: Issues, workspace: S3Archive | undefined): Channel[] {
  const channels: Channel[] = [];
  const names = new Set<string>();
  const addChannel = (name: string, uri: string, path: string, extra: Partial<Channel>) => {
    if (!CHANNEL_NAME_PATTERN.test(name)) {
      issues.add(path, `channel name '${name}' must be 1–64 letters, digits, ".", "-" or "_"`);
    }
    if (names.has(name)) issues.add(path, `channel '${name}' is given twice`);
    names.add(name);
    checkS3Uri(issues, path, uri, 's3://my-bucket/data/train/');
    channels.push({
      ChannelName: name,
      DataSource: {
        S3DataSource: { S3DataType: 'S3Prefix', S3Uri: uri, S3DataDistributionType: 'FullyReplicated' },
      },
      ...extra,
    });
  };
  for (const [name, uri] of Object.entries(cfg.inputs ?? {})) addChannel(name, uri, `cfg.inputs.${name}`, {});
  if (cfg.model_uri !== null) {
    addChannel(cfg.model_channel_name, cfg.model_uri, 'cfg.model_uri', {
      ContentType: 'application/x-sagemaker-model',
      InputMode: 'File',
    });
  }
  if (workspace !== undefined) {
    if (names.has(WORKSPACE_CHANNEL)) {
      issues.add(
        cfg.inputs?.[WORKSPACE_CHANNEL] === undefined
          ? 'cfg.model_channel_name'
          : `cfg.inputs.${WORKSPACE_CHANNEL}`,
        `channel '${WORKSPACE_CHANNEL}' is the workspace's: give this input another name`,
      );
    }
    channels.push(workspaceChannelOf(workspace));
  }
  if (channels.length > SAGEMAKER_LIMITS.channels) {
    issues.add('cfg.inputs', `${channels.length} input channels; SageMaker allows at most 20`);
  }
  return channels;
}

function buildMetricDefinitions(cfg: AwsSageMakerOpts, issues: Issues): MetricDefinition[] | undefined {
  if (cfg.metric_definitions === null) return undefined;
  if (cfg.metric_definitions.length > SAGEMAKER_LIMITS.metricDefinitions) {
    issues.add(
      'cfg.metric_definitions',
      `has ${cfg.metric_definitions.length} entries; SageMaker allows at most 40`,
    );
  }
  return cfg.metric_definitions.map((definition, i) => {
    const { Name, Regex } = definition;
    const extra = Object.keys(definition).filter((k) => k !== 'Name' && k !== 'Regex');
    if (Name === undefined || Regex === undefined || extra.length > 0) {
      issues.add(`cfg.metric_definitions.${i}`, 'must be {"Name": "...", "Regex": "..."}');
    } else {
      if (Name.length < 1 || Name.length > SAGEMAKER_LIMITS.metricNameLength) {
        issues.add(`cfg.metric_definitions.${i}.Name`, 'must be 1–255 characters');
      }
      if (Regex.length < 1 || Regex.length > SAGEMAKER_LIMITS.metricRegexLength) {
        issues.add(`cfg.metric_definitions.${i}.Regex`, 'must be 1–500 characters');
      }
    }
    return { Name: Name ?? '', Regex: Regex ?? '' };
  });
}

function buildAlgorithmSpecification(
  resolvedRole: Role,
  cfg: AwsSageMakerOpts,
  issues: Issues,
): AlgorithmSpecification {
  if (!(INPUT_MODES as readonly string[]).includes(cfg.input_mode)) {
    issues.add('cfg.input_mode', `must be one of ${INPUT_MODES.join(', ')}; got '${cfg.input_mode}'`);
  }
  const spec: AlgorithmSpecification = {
    TrainingImage: resolvedRole.image,
    TrainingInputMode: cfg.input_mode as TrainingInputMode,
  };
  const metrics = buildMetricDefinitions(cfg, issues);
  if (metrics !== undefined) spec.MetricDefinitions = metrics;
  if (cfg.enable_sagemaker_metrics !== null)
    spec.EnableSageMakerMetricsTimeSeries = cfg.enable_sagemaker_metrics;
  spec.ContainerEntrypoint = [resolvedRole.entrypoint];
  if (resolvedRole.args.length > 0) spec.ContainerArguments = [...resolvedRole.args];
  const accessMode = cfg.training_repository_access_mode;
  const provider = cfg.training_repository_credentials_provider_arn;
  if (accessMode !== null && !(ACCESS_MODES as readonly string[]).includes(accessMode)) {
    issues.add('cfg.training_repository_access_mode', `must be Platform or Vpc; got '${accessMode}'`);
  }
  if (provider !== null) {
    if (accessMode !== 'Vpc') {
      issues.add(
        'cfg.training_repository_credentials_provider_arn',
        'only applies to private registries: also set training_repository_access_mode=Vpc',
      );
    }
    if (!LAMBDA_ARN_PATTERN.test(provider)) {
      issues.add(
        'cfg.training_repository_credentials_provider_arn',
        'must be a Lambda function ARN, e.g. arn:aws:lambda:us-east-1:123456789012:function:registry-creds',
      );
    }
  }
  if (accessMode !== null) {
    spec.TrainingImageConfig = { TrainingRepositoryAccessMode: accessMode as TrainingRepositoryAccessMode };
    if (provider !== null) {
      spec.TrainingImageConfig.TrainingRepositoryAuthConfig = {
        TrainingRepositoryCredentialsProviderArn: provider,
      };
    }
  }
  return spec;
}

function buildResourceConfig(role: Role, cfg: AwsSageMakerOpts, issues: Issues): ResourceConfig {
  const instanceType = resolveInstanceType(role, cfg, issues);
  if (!Number.isInteger(role.numReplicas) || role.numReplicas < 1) {
    issues.add('app.roles.0.numReplicas', `must be at least 1; got ${role.numReplicas}`);
  }
  if (cfg.instance_count !== null && cfg.instance_count !== role.numReplicas) {
    issues.add(
      'cfg.instance_count',
      `is ${cfg.instance_count} but app.roles.0.numReplicas is ${role.numReplicas}, and the app's commands ` +
        '(e.g. torchrun --nnodes) were built for numReplicas instances. Drop instance_count, or change the ' +
        'replica count in the app (e.g. dist.ddp -j 4x8, utils.python --num_replicas 4)',
    );
  }
  checkRange(issues, 'cfg.volume_size', cfg.volume_size, 1, undefined, 'GB of storage per instance');
  checkKmsKey(issues, 'cfg.volume_kms_key', cfg.volume_kms_key);
  checkRange(
    issues,
    'cfg.keep_alive_period_in_seconds',
    cfg.keep_alive_period_in_seconds,
    0,
    SAGEMAKER_LIMITS.keepAliveSeconds,
    'warm pool retention in seconds',
  );
  const resourceConfig: ResourceConfig = {
    InstanceType: instanceType as ResourceConfig['InstanceType'],
    InstanceCount: cfg.instance_count ?? role.numReplicas,
    VolumeSizeInGB: cfg.volume_size,
  };
  if (cfg.volume_kms_key !== null) resourceConfig.VolumeKmsKeyId = cfg.volume_kms_key;
  if (cfg.keep_alive_period_in_seconds !== null) {
    resourceConfig.KeepAlivePeriodInSeconds = cfg.keep_alive_period_in_seconds;
  }
  return resourceConfig;
}

function buildStoppingCondition(cfg: AwsSageMakerOpts, issues: Issues): StoppingCondition {
  checkRange(
    issues,
    'cfg.max_run',
    cfg.max_run,
    1,
    SAGEMAKER_LIMITS.maxRuntimeSeconds,
    'seconds, at most 28 days',
  );
  checkRange(issues, 'cfg.max_wait', cfg.max_wait, 1, undefined, 'seconds');
  if (cfg.use_spot_instances) {
    if (cfg.max_wait === null) {
      issues.add(
        'cfg.max_wait',
        `is required with use_spot_instances: give at least max_run (${cfg.max_run})`,
      );
    } else if (cfg.max_wait < cfg.max_run) {
      issues.add('cfg.max_wait', `must be at least max_run (${cfg.max_run}); got ${cfg.max_wait}`);
    }
  } else if (cfg.max_wait !== null) {
    issues.add(
      'cfg.max_wait',
      'only applies to managed spot training: also set use_spot_instances=true, or drop max_wait',
    );
  }
  const condition: StoppingCondition = { MaxRuntimeInSeconds: cfg.max_run };
  if (cfg.max_wait !== null) condition.MaxWaitTimeInSeconds = cfg.max_wait;
  return condition;
}

function checkVpc(
  cfg: AwsSageMakerOpts,
  issues: Issues,
): { Subnets: string[]; SecurityGroupIds: string[] } | undefined {
  const { subnets, security_group_ids: groups } = cfg;
  if (subnets === null && groups === null) return undefined;
  if (subnets === null || subnets.length === 0) {
    issues.add('cfg.subnets', 'give 1–16 subnet ids together with security_group_ids');
  } else if (subnets.length > SAGEMAKER_LIMITS.subnets) {
    issues.add('cfg.subnets', `has ${subnets.length} subnets; SageMaker allows at most 16`);
  }
  if (groups === null || groups.length === 0) {
    issues.add('cfg.security_group_ids', 'give 1–5 security group ids together with subnets');
  } else if (groups.length > SAGEMAKER_LIMITS.securityGroups) {
    issues.add('cfg.security_group_ids', `has ${groups.length} security groups; SageMaker allows at most 5`);
  }
  for (const [name, values] of [
    ['subnets', subnets],
    ['security_group_ids', groups],
  ] as const) {
    (values ?? []).forEach((value, i) => {
      if (!VPC_ID_PATTERN.test(value) || value.length > SAGEMAKER_LIMITS.subnetOrGroupLength) {
        issues.add(`cfg.${name}.${i}`, `'${value}' is not a valid id (e.g. subnet-0a1b2c3d, sg-0a1b2c3d)`);
      }
    });
  }
  return { SecurityGroupIds: [...(groups ?? [])], Subnets: [...(subnets ?? [])] };
}

function retryAttempts(role: Role, cfg: AwsSageMakerOpts, issues: Issues): number | undefined {
  if (cfg.max_retry_attempts !== null) {
    checkRange(
      issues,
      'cfg.max_retry_attempts',
      cfg.max_retry_attempts,
      1,
      SAGEMAKER_LIMITS.retryAttempts,
      'retries',
    );
    return cfg.max_retry_attempts;
  }
  if (role.maxRetries <= 0) return undefined;
  if (role.maxRetries > SAGEMAKER_LIMITS.retryAttempts) {
    issues.add(
      'app.roles.0.maxRetries',
      `is ${role.maxRetries}; SageMaker retries at most 30 times: lower it or set cfg.max_retry_attempts`,
    );
  }
  return role.maxRetries;
}

function checkSdkOnlyOptions(cfg: AwsSageMakerOpts, issues: Issues): void {
  for (const [spelling, name] of sdkOnlyOptionsIn(cfg)) {
    issues.add(`cfg.${spelling}`, `is not supported: ${SDK_ONLY_OPTIONS[name]}`);
  }
  if (cfg.debugger_hook_config === true) {
    issues.add(
      'cfg.debugger_hook_config',
      'SageMaker Debugger hooks were configured by the Python SDK and are not supported; drop the option',
    );
  }
}

/**
 * How long a string is for the checks: as it is, or, with `lengthsForId`, as if each occurrence of the job
 * name were the name made with that (longest) suffix.
 */
function checkedLength(
  jobName: string,
  cfg: AwsSageMakerOpts,
  app: AppDef,
  lengthsForId: string | undefined,
): CheckedLength {
  const longest =
    lengthsForId === undefined ? jobName : trainingJobName(cfg.base_job_name ?? app.name, lengthsForId);
  const extra = longest.length - jobName.length;
  if (extra <= 0) return (text) => text.length;
  return (text) => text.length + extra * (text.split(jobName).length - 1);
}

/**
 * Translates an app and resolved options into the CreateTrainingJob input.
 *
 * How the AppDef maps:
 * - the single role's image → `AlgorithmSpecification.TrainingImage`, entrypoint → `ContainerEntrypoint`,
 *   args (after macros) → `ContainerArguments`;
 * - macros: `${app_id}` → the training job name, `${replica_id}` → {@link REPLICA_ID_EXPRESSION},
 *   `${rank0_env}` → `TORCHX_RANK0_HOST` (set to `algo-1`), `${img_root}` → empty;
 * - `Environment` = cfg.environment, then the role's env, then `TORCHX_JOB_ID` (unless given),
 *   `TORCHX_ROLE_IDX`, `TORCHX_ROLE_NAME`, `TORCHX_RANK0_HOST`;
 * - numReplicas → `InstanceCount`; the resource's instance type → `InstanceType`; maxRetries →
 *   `RetryStrategy.MaximumRetryAttempts`; app metadata → tags;
 * - a `workspace` adds the input channel {@link WORKSPACE_CHANNEL} of its archive, and the entrypoint unpacks
 *   the archive before it runs the role's (see {@link runInWorkspace}). Without one, the request is TorchX's.
 *
 * @throws ValidationError listing every field SageMaker would reject; AppNotSupportedError for apps with
 *   several roles or mounts.
 */
export function translateApp(
  app: AppDef,
  cfg: AwsSageMakerOpts,
  context: TranslateContext,
  workspace?: Readonly<JobWorkspace>,
): AwsSageMakerRequest {
  const archive = workspace === undefined ? undefined : sageMakerArchiveOf(workspace);
  const role = checkAppShape(app);
  const issues = new Issues();
  checkSdkOnlyOptions(cfg, issues);
  checkImage(issues, role.image, cfg.training_repository_access_mode);
  checkRoleArn(issues, cfg.role);
  checkS3Uri(issues, 'cfg.output_path', cfg.output_path, 's3://my-bucket/torchx/');
  checkKmsKey(issues, 'cfg.output_kms_key', cfg.output_kms_key);

  const jobName = trainingJobName(cfg.base_job_name ?? app.name, context.uniqueId);
  const lengthOf = checkedLength(jobName, cfg, app, context.lengthsForId);
  if (!TRAINING_JOB_NAME_PATTERN.test(jobName) || jobName.length > MAX_TRAINING_JOB_NAME_LENGTH) {
    issues.add(
      cfg.base_job_name === null ? 'app.name' : 'cfg.base_job_name',
      `gives the invalid job name '${jobName}'`,
    );
  }
  const resolvedRole = applyMacros(role, {
    imgRoot: '',
    appId: jobName,
    replicaId: REPLICA_ID_EXPRESSION,
    rank0Env: RANK0_HOST_ENV,
  });
  // cfg.hyperparameters reach the script's command line, merged with the role's --key value arguments.
  const merged = mergeHyperParameters(
    resolvedRole.entrypoint,
    resolvedRole.args,
    cfg.hyperparameters ?? {},
    SAGEMAKER_LIMITS.containerItemLength,
  );
  resolvedRole.args = merged.args;
  for (const key of merged.tooLong) {
    issues.add(
      `cfg.hyperparameters.${key}`,
      `goes on the script's command line as --${key} <value> (as TorchX delivered hyperparameters), where ` +
        `SageMaker allows at most ${SAGEMAKER_LIMITS.containerItemLength} characters per argument: shorten it, ` +
        'or pass it in a file (e.g. an input channel)',
    );
  }
  checkContainerCommand(issues, role, resolvedRole.args, lengthOf);

  const algorithmSpecification = buildAlgorithmSpecification(resolvedRole, cfg, issues);
  if (archive !== undefined) runInWorkspace(algorithmSpecification, archive);
  const channels = buildChannels(cfg, issues, archive);
  const resourceConfig = buildResourceConfig(role, cfg, issues);
  const vpcConfig = checkVpc(cfg, issues);
  if (cfg.training_repository_access_mode === 'Vpc' && vpcConfig === undefined) {
    issues.add(
      'cfg.subnets',
      "training_repository_access_mode=Vpc pulls the image through the job's VPC: give subnets and security_group_ids",
    );
  }
  const stoppingCondition = buildStoppingCondition(cfg, issues);
  const tags = buildTags(app, role, cfg, context, issues);
  const environment = buildEnvironment(resolvedRole, cfg, jobName, context, issues, lengthOf);
  const hyperParameters = merged.hyperParameters;
  checkHyperParameters(issues, hyperParameters, lengthOf);
  const retries = retryAttempts(role, cfg, issues);
  if (cfg.checkpoint_local_path !== null && cfg.checkpoint_s3_uri === null) {
    issues.add(
      'cfg.checkpoint_local_path',
      'needs checkpoint_s3_uri: SageMaker syncs the local path with that S3 URI',
    );
  }
  checkS3Uri(issues, 'cfg.checkpoint_s3_uri', cfg.checkpoint_s3_uri, 's3://my-bucket/checkpoints/');
  issues.throwIfAny();
  const allowed = context.allowedInstanceTypes;
  if (allowed !== undefined && !allowed.includes(resourceConfig.InstanceType ?? '')) {
    throw new InstanceTypeNotAllowedError(
      cfg.instance_type === null ? 'app.roles.0.resource' : 'cfg.instance_type',
      resourceConfig.InstanceType ?? '',
      allowed,
      INSTANCE_TYPES_SETTING,
    );
  }

  const outputDataConfig: OutputDataConfig = { S3OutputPath: cfg.output_path };
  if (cfg.output_kms_key !== null) outputDataConfig.KmsKeyId = cfg.output_kms_key;
  if (cfg.disable_output_compression) outputDataConfig.CompressionType = 'NONE';
  const checkpointConfig: CheckpointConfig | undefined =
    cfg.checkpoint_s3_uri === null
      ? undefined
      : {
          S3Uri: cfg.checkpoint_s3_uri,
          ...(cfg.checkpoint_local_path === null ? {} : { LocalPath: cfg.checkpoint_local_path }),
        };
  // Keys follow the order of the API reference; optional members appear only when set.
  const request: CreateTrainingJobCommandInput = {
    TrainingJobName: jobName,
    ...(Object.keys(hyperParameters).length > 0 ? { HyperParameters: { ...hyperParameters } } : {}),
    AlgorithmSpecification: algorithmSpecification,
    RoleArn: cfg.role,
    ...(channels.length > 0 ? { InputDataConfig: channels } : {}),
    OutputDataConfig: outputDataConfig,
    ResourceConfig: resourceConfig,
    ...(vpcConfig === undefined ? {} : { VpcConfig: vpcConfig }),
    StoppingCondition: stoppingCondition,
    Tags: tags,
    ...(cfg.enable_network_isolation ? { EnableNetworkIsolation: true } : {}),
    ...(cfg.encrypt_inter_container_traffic ? { EnableInterContainerTrafficEncryption: true } : {}),
    ...(cfg.use_spot_instances ? { EnableManagedSpotTraining: true } : {}),
    ...(checkpointConfig === undefined ? {} : { CheckpointConfig: checkpointConfig }),
    ...(cfg.disable_profiler === true ? { ProfilerConfig: { DisableProfiler: true } } : {}),
    Environment: environment,
    ...(retries === undefined ? {} : { RetryStrategy: { MaximumRetryAttempts: retries } }),
    ...(cfg.enable_infra_check === null
      ? {}
      : { InfraCheckConfig: { EnableInfraCheck: cfg.enable_infra_check } }),
  };
  return { createTrainingJob: request };
}
