/**
 * The environment variables the functions read (names, meanings: docs/environment.md is generated from
 * them), and the names both sides derive from them (the stack tag, the Batch name prefix). Shared with the CDK stack (the one file of functions/ that cdk/
 * imports), so names cannot drift.
 */
import { hash } from 'node:crypto';

/** Tag key every Batch job, job definition and SageMaker training job launched by a stack carries. */
export const STACK_TAG_KEY = 'torchx-serverless:stack';

/** Which part of the functions reads a variable (the sections of docs/environment.md). */
export type EnvGroup = 'core' | 'security' | 'slurm' | 'kubernetes';

/** One environment variable the functions read: its name, what it means, and which part reads it. */
export interface EnvVariable {
  readonly name: string;
  readonly group: EnvGroup;
  /** One or two sentences of Markdown: what the value is, its format and its default. */
  readonly description: string;
}

/**
 * Every environment variable the functions (deployed, or behind the local server) read, in the order
 * docs/environment.md lists them (`npm run environment-doc` writes that page from this table).
 */
export const ENV_VARIABLES = {
  tableName: {
    name: 'TXS_TABLE_NAME',
    group: 'core',
    description: 'DynamoDB table of app records.',
  },
  eventBusName: {
    name: 'TXS_EVENT_BUS_NAME',
    group: 'core',
    description: 'EventBridge bus for normalized `AppState Change` events (optional).',
  },
  schedulers: {
    name: 'TXS_SCHEDULERS',
    group: 'core',
    description: 'Comma-separated scheduler names to enable (default: aws_batch,aws_sagemaker).',
  },
  sessionName: {
    name: 'TXS_SESSION_NAME',
    group: 'core',
    description: 'Default session name for new handles (default: torchx).',
  },
  batchQueues: {
    name: 'TXS_BATCH_QUEUES',
    group: 'core',
    description: 'Comma-separated Batch job queues the reconciler lists (optional).',
  },
  dynamoDbEndpoint: {
    name: 'TXS_DYNAMODB_ENDPOINT',
    group: 'core',
    description: 'DynamoDB endpoint override (local mode: the embedded dynalite).',
  },
  localDataDir: {
    name: 'TXS_LOCAL_DATA_DIR',
    group: 'core',
    description: 'local_cwd data directory (local mode only).',
  },
  localReplicaUmask: {
    name: 'TXS_LOCAL_REPLICA_UMASK',
    group: 'core',
    description:
      "umask (octal) local_cwd replicas run with: the server's own umask before it tightened it (local mode only).",
  },
  retentionDays: {
    name: 'TXS_RETENTION_DAYS',
    group: 'core',
    description: 'Days to keep finished app records (DynamoDB TTL).',
  },
  adminPrincipals: {
    name: 'TXS_ADMIN_PRINCIPALS',
    group: 'security',
    description:
      'Comma-separated principals (role, user or session ARNs; local names) that may act on every app.',
  },
  sessionOwnerRoles: {
    name: 'TXS_SESSION_OWNER_ROLES',
    group: 'security',
    description:
      'Comma-separated IAM role names (a trailing `*` matches a prefix) whose sessions are separate owners, because a trusted identity provider sets the session name (e.g. `AWSReservedSSO_*`).',
  },
  allowPrivileged: {
    name: 'TXS_ALLOW_PRIVILEGED',
    group: 'security',
    description: '`true` allows privileged containers (default: refused).',
  },
  allowedHostPaths: {
    name: 'TXS_ALLOWED_HOST_PATHS',
    group: 'security',
    description: 'Comma-separated host path prefixes bind mounts may name, or `*` (default: none).',
  },
  allowedDevices: {
    name: 'TXS_ALLOWED_DEVICES',
    group: 'security',
    description: 'Comma-separated host device paths device mounts may name, or `*` (default: none).',
  },
  sageMakerInstanceTypes: {
    name: 'TXS_SAGEMAKER_INSTANCE_TYPES',
    group: 'security',
    description: 'Comma-separated SageMaker training instance types runs may use (default: any).',
  },
  stackName: {
    name: 'TXS_STACK_NAME',
    group: 'security',
    description: `Name of the deploying stack: every job and training job is tagged \`${STACK_TAG_KEY}\` = this.`,
  },
  slurmUrl: {
    name: 'TXS_SLURM_URL',
    group: 'slurm',
    description: "Slurmrestd's base URL, e.g. `http://head:6820` (without it slurm only dry-runs).",
  },
  slurmUser: {
    name: 'TXS_SLURM_USER',
    group: 'slurm',
    description: 'The Slurm user jobs are submitted as (`X-SLURM-USER-NAME`).',
  },
  slurmToken: {
    name: 'TXS_SLURM_TOKEN',
    group: 'slurm',
    description: 'A token from `scontrol token` (takes precedence over a key).',
  },
  slurmJwtKeyFile: {
    name: 'TXS_SLURM_JWT_KEY_FILE',
    group: 'slurm',
    description:
      "A file holding the cluster's JWT key (`jwt_key=`); short-lived HS256 tokens are signed from it.",
  },
  slurmJwtKey: {
    name: 'TXS_SLURM_JWT_KEY',
    group: 'slurm',
    description: "The cluster's JWT key, base64 (the deployed stack fills it from a secret).",
  },
  slurmJwtKeySecretArn: {
    name: 'TXS_SLURM_JWT_KEY_SECRET_ARN',
    group: 'slurm',
    description:
      "A Secrets Manager secret holding the JWT key (base64 SecretString or SecretBinary); the stack's way.",
  },
  slurmWorkDir: {
    name: 'TXS_SLURM_WORKDIR',
    group: 'slurm',
    description: 'The working directory of jobs without `job_dir` (default /tmp, on the cluster).',
  },
  slurmLogRoot: {
    name: 'TXS_SLURM_LOG_ROOT',
    group: 'slurm',
    description:
      "Where this server sees the cluster's shared filesystem, to read job output files (default /).",
  },
  slurmGpusPerNode: {
    name: 'TXS_SLURM_GPUS_PER_NODE',
    group: 'slurm',
    description: '`true` for Slurm >= 24.11 (`--gpus-per-node` instead of `--gpus-per-task`).',
  },
  kubeconfig: {
    name: 'TXS_KUBECONFIG',
    group: 'kubernetes',
    description: 'A JSON kubeconfig whose current context is the cluster (local mode).',
  },
  eksCluster: {
    name: 'TXS_EKS_CLUSTER',
    group: 'kubernetes',
    description: "The EKS cluster name (EKS tokens from the function's IAM role).",
  },
  eksEndpoint: {
    name: 'TXS_EKS_ENDPOINT',
    group: 'kubernetes',
    description: "The EKS cluster's API endpoint (https://…eks.amazonaws.com).",
  },
  eksCaData: {
    name: 'TXS_EKS_CA_DATA',
    group: 'kubernetes',
    description: "The EKS cluster's CA (certificateAuthority.data, base64).",
  },
  kubeNamespace: {
    name: 'TXS_K8S_NAMESPACE',
    group: 'kubernetes',
    description: "The namespace `list` reads (default: the kubeconfig's, else default).",
  },
} as const satisfies Record<string, EnvVariable>;

/** The variables' names by key (`ENV.tableName` is `'TXS_TABLE_NAME'`): what the code reads and sets. */
export const ENV = Object.fromEntries(
  Object.entries(ENV_VARIABLES).map(([key, variable]) => [key, variable.name]),
) as { readonly [K in keyof typeof ENV_VARIABLES]: (typeof ENV_VARIABLES)[K]['name'] };

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
