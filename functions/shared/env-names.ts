/**
 * The environment variables the functions read (their names, and what they mean: docs/environment.md is
 * generated from this file), and the names both sides derive from them (the stack tag, the Batch name
 * prefix). Shared with the CDK stack (the one file of functions/ that cdk/ imports), so names cannot drift.
 */
import { hash } from 'node:crypto';

/** Tag key every Batch job, job definition and SageMaker training job launched by a stack carries. */
export const STACK_TAG_KEY = 'torchx-serverless:stack';

/**
 * A container image reference as AWS Batch takes one (`TXS_WORKSPACE_FETCH_IMAGE`): up to 255 letters,
 * digits and `-_:./#@` (a digest's `@` included).
 */
export const CONTAINER_IMAGE_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_:./#@-]{0,254}$/;

/**
 * The key prefix of every workspace archive in a stack's workspace bucket (each owner's archives are under a
 * prefix of their own below it): what the bucket's lifecycle rule expires and the job roles may read.
 */
export const WORKSPACE_KEY_PREFIX = 'workspaces/';

/** Days a workspace archive is kept when TXS_WORKSPACE_DAYS is not set (the construct's default too). */
export const DEFAULT_WORKSPACE_DAYS = 30;

/** Which part of the functions reads a variable (the sections of docs/environment.md). */
export type EnvGroup = 'core' | 'security' | 'slurm' | 'kubernetes';

/** What an environment variable means, and which part of the functions reads it. */
export interface EnvDescription {
  readonly group: EnvGroup;
  /** One or two sentences of Markdown: what the value is, its format and its default. */
  readonly description: string;
}

/** The names of the environment variables the functions read, by key (`ENV.tableName`). */
export const ENV = {
  tableName: 'TXS_TABLE_NAME',
  eventBusName: 'TXS_EVENT_BUS_NAME',
  schedulers: 'TXS_SCHEDULERS',
  sessionName: 'TXS_SESSION_NAME',
  batchQueues: 'TXS_BATCH_QUEUES',
  dynamoDbEndpoint: 'TXS_DYNAMODB_ENDPOINT',
  localDataDir: 'TXS_LOCAL_DATA_DIR',
  retentionDays: 'TXS_RETENTION_DAYS',
  workspaceBucket: 'TXS_WORKSPACE_BUCKET',
  workspaceDays: 'TXS_WORKSPACE_DAYS',
  adminPrincipals: 'TXS_ADMIN_PRINCIPALS',
  sessionOwnerRoles: 'TXS_SESSION_OWNER_ROLES',
  allowPrivileged: 'TXS_ALLOW_PRIVILEGED',
  allowedHostPaths: 'TXS_ALLOWED_HOST_PATHS',
  allowedDevices: 'TXS_ALLOWED_DEVICES',
  sageMakerInstanceTypes: 'TXS_SAGEMAKER_INSTANCE_TYPES',
  workspaceFetchImage: 'TXS_WORKSPACE_FETCH_IMAGE',
  stackName: 'TXS_STACK_NAME',
  slurmUrl: 'TXS_SLURM_URL',
  slurmUser: 'TXS_SLURM_USER',
  slurmToken: 'TXS_SLURM_TOKEN',
  slurmJwtKeyFile: 'TXS_SLURM_JWT_KEY_FILE',
  slurmJwtKey: 'TXS_SLURM_JWT_KEY',
  slurmJwtKeySecretArn: 'TXS_SLURM_JWT_KEY_SECRET_ARN',
  slurmWorkDir: 'TXS_SLURM_WORKDIR',
  slurmLogRoot: 'TXS_SLURM_LOG_ROOT',
  slurmGpusPerNode: 'TXS_SLURM_GPUS_PER_NODE',
  kubeconfig: 'TXS_KUBECONFIG',
  eksCluster: 'TXS_EKS_CLUSTER',
  eksEndpoint: 'TXS_EKS_ENDPOINT',
  eksCaData: 'TXS_EKS_CA_DATA',
  kubeNamespace: 'TXS_K8S_NAMESPACE',
} as const;

/**
 * What each variable of {@link ENV} means, and which part of the functions reads it: docs/environment.md
 * is generated from this table (`npm run environment-doc`). The functions never import it, so bundling
 * drops it.
 */
export const ENV_DESCRIPTIONS = {
  tableName: { group: 'core', description: 'DynamoDB table of app records.' },
  eventBusName: {
    group: 'core',
    description: 'EventBridge bus for normalized `AppState Change` events (optional).',
  },
  schedulers: {
    group: 'core',
    description: 'Comma-separated scheduler names to enable (default: aws_batch,aws_sagemaker).',
  },
  sessionName: { group: 'core', description: 'Default session name for new handles (default: torchx).' },
  batchQueues: {
    group: 'core',
    description: 'Comma-separated Batch job queues the reconciler lists (optional).',
  },
  dynamoDbEndpoint: {
    group: 'core',
    description: 'DynamoDB endpoint override (local mode: the embedded dynalite).',
  },
  localDataDir: { group: 'core', description: 'local_cwd data directory (local mode only).' },
  retentionDays: { group: 'core', description: 'Days to keep finished app records (DynamoDB TTL).' },
  workspaceBucket: {
    group: 'core',
    description:
      "S3 bucket of workspace archives: the deployed stack's; on the local server, where it copies an archive for schedulers whose jobs fetch from S3 (aws_batch, aws_sagemaker, kubernetes). Without it such a run with a workspace is refused.",
  },
  workspaceDays: {
    group: 'core',
    description:
      "Days the bucket's lifecycle rule keeps a workspace archive (default 30); one older than half of that is uploaded again.",
  },
  adminPrincipals: {
    group: 'security',
    description:
      'Comma-separated principals (role, user or session ARNs; local names) that may act on every app.',
  },
  sessionOwnerRoles: {
    group: 'security',
    description:
      'Comma-separated IAM role names (a trailing `*` matches a prefix) whose sessions are separate owners, because a trusted identity provider sets the session name (e.g. `AWSReservedSSO_*`).',
  },
  allowPrivileged: {
    group: 'security',
    description: '`true` allows privileged containers (default: refused).',
  },
  allowedHostPaths: {
    group: 'security',
    description: 'Comma-separated host path prefixes bind mounts may name, or `*` (default: none).',
  },
  allowedDevices: {
    group: 'security',
    description: 'Comma-separated host device paths device mounts may name, or `*` (default: none).',
  },
  sageMakerInstanceTypes: {
    group: 'security',
    description: 'Comma-separated SageMaker training instance types runs may use (default: any).',
  },
  workspaceFetchImage: {
    group: 'security',
    description:
      "Image of the container that fetches a workspace from S3 before the role's container starts (`aws_batch` " +
      "with the job role, `kubernetes` and `kubernetes_mcad` with the pod's service account): an AWS CLI image " +
      'whose entrypoint is `aws` (default: a pinned `public.ecr.aws/aws-cli/aws-cli`; see docs/workspaces.md).',
  },
  stackName: {
    group: 'security',
    // the tag key written out (not interpolated), so that bundling can still drop this table
    description:
      'Name of the deploying stack: every job and training job is tagged `torchx-serverless:stack` = this.',
  },
  slurmUrl: {
    group: 'slurm',
    description:
      "Slurmrestd's base URL, e.g. `http://head:6820` (without it slurm only dry-runs; with it, set the user and a token or key).",
  },
  slurmUser: { group: 'slurm', description: 'The Slurm user jobs are submitted as (`X-SLURM-USER-NAME`).' },
  slurmToken: { group: 'slurm', description: 'A token from `scontrol token` (takes precedence over a key).' },
  slurmJwtKeyFile: {
    group: 'slurm',
    description:
      "A file holding the cluster's JWT key (`jwt_key=`); short-lived HS256 tokens are signed from it.",
  },
  slurmJwtKey: {
    group: 'slurm',
    description: "The cluster's JWT key, base64 (the deployed stack fills it from a secret).",
  },
  slurmJwtKeySecretArn: {
    group: 'slurm',
    description:
      "A Secrets Manager secret holding the JWT key (base64 SecretString or SecretBinary); the stack's way.",
  },
  slurmWorkDir: {
    group: 'slurm',
    description: 'The working directory of jobs without `job_dir` (default /tmp, on the cluster).',
  },
  slurmLogRoot: {
    group: 'slurm',
    description:
      "Where this server sees the cluster's shared filesystem, to read job output files (default /).",
  },
  slurmGpusPerNode: {
    group: 'slurm',
    description: '`true` for Slurm >= 24.11 (`--gpus-per-node` instead of `--gpus-per-task`).',
  },
  kubeconfig: {
    group: 'kubernetes',
    description: 'A kubeconfig file (YAML or JSON) whose current context is the cluster (local mode).',
  },
  eksCluster: {
    group: 'kubernetes',
    description: "The EKS cluster name (EKS tokens from the function's IAM role).",
  },
  eksEndpoint: {
    group: 'kubernetes',
    description: "The EKS cluster's API endpoint (https://…eks.amazonaws.com).",
  },
  eksCaData: {
    group: 'kubernetes',
    description: "The EKS cluster's CA (certificateAuthority.data, base64).",
  },
  kubeNamespace: {
    group: 'kubernetes',
    description: "The namespace `list` reads (default: the kubeconfig's, else default).",
  },
} as const satisfies Readonly<Record<keyof typeof ENV, EnvDescription>>;

/** The items of a comma-separated variable (`a, b,c`), trimmed, empty ones left out; none when unset. */
export function commaList(raw: string | undefined): string[] {
  return (raw ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/** Longest {@link batchNamePrefix}: what it takes from the 128 characters of a Batch job or definition name. */
export const MAX_BATCH_NAME_PREFIX_LENGTH = 32;

/**
 * The prefix of every Batch job and job definition name a deployed stack makes: the stack name and `_`, so
 * the Run role's IAM policy can name exactly the stack's own job definitions (`job-definition/<prefix>*`).
 * Stack names have no `_` (CloudFormation allows letters, digits and `-`), so no stack's prefix starts
 * another's. A stack name of 32 characters or more is cut to 22 and followed by `-` and 8 hex characters of
 * its SHA-256, so the prefix stays within {@link MAX_BATCH_NAME_PREFIX_LENGTH} and still differs per stack.
 *
 * @example
 * ```ts
 * batchNamePrefix('TorchxServerless-prod'); // 'TorchxServerless-prod_'
 * ```
 * @throws TypeError when `stackName` is not a CloudFormation stack name.
 */
export function batchNamePrefix(stackName: string): string {
  if (!/^[A-Za-z][A-Za-z0-9-]{0,127}$/.test(stackName)) {
    throw new TypeError(`'${stackName}' is not a CloudFormation stack name (letters, digits and -)`);
  }
  if (stackName.length < MAX_BATCH_NAME_PREFIX_LENGTH) return `${stackName}_`;
  return `${stackName.slice(0, 22)}-${hash('sha256', stackName, 'hex').slice(0, 8)}_`;
}
