/**
 * Names of the environment variables the functions read, and the names both sides derive from them (the
 * stack tag, the Batch name prefix). Shared with the CDK stack (the one file of functions/ that cdk/
 * imports), so names cannot drift.
 */
import { hash } from 'node:crypto';

export const ENV = {
  /** DynamoDB table of app records. */
  tableName: 'TXS_TABLE_NAME',
  /** EventBridge bus for normalized `AppState Change` events (optional). */
  eventBusName: 'TXS_EVENT_BUS_NAME',
  /** Comma-separated scheduler names to enable (default: aws_batch,aws_sagemaker). */
  schedulers: 'TXS_SCHEDULERS',
  /** Default session name for new handles (default: torchx). */
  sessionName: 'TXS_SESSION_NAME',
  /** Comma-separated Batch job queues the reconciler lists (optional). */
  batchQueues: 'TXS_BATCH_QUEUES',
  /** DynamoDB endpoint override (local mode: the embedded dynalite). */
  dynamoDbEndpoint: 'TXS_DYNAMODB_ENDPOINT',
  /** local_cwd data directory (local mode only). */
  localDataDir: 'TXS_LOCAL_DATA_DIR',
  /** Days to keep finished app records (DynamoDB TTL). */
  retentionDays: 'TXS_RETENTION_DAYS',
  // ---- security settings (docs/security.md); read and checked once per cold start.
  /** Comma-separated principals (role, user or session ARNs; local names) that may act on every app. */
  adminPrincipals: 'TXS_ADMIN_PRINCIPALS',
  /**
   * Comma-separated IAM role names (a trailing `*` matches a prefix) whose sessions are separate owners,
   * because a trusted identity provider sets the session name (e.g. `AWSReservedSSO_*`).
   */
  sessionOwnerRoles: 'TXS_SESSION_OWNER_ROLES',
  /** `true` allows privileged containers (default: refused). */
  allowPrivileged: 'TXS_ALLOW_PRIVILEGED',
  /** Comma-separated host path prefixes bind mounts may name, or `*` (default: none). */
  allowedHostPaths: 'TXS_ALLOWED_HOST_PATHS',
  /** Comma-separated host device paths device mounts may name, or `*` (default: none). */
  allowedDevices: 'TXS_ALLOWED_DEVICES',
  /** Comma-separated SageMaker training instance types runs may use (default: any). */
  sageMakerInstanceTypes: 'TXS_SAGEMAKER_INSTANCE_TYPES',
  /** Name of the deploying stack: every job and training job is tagged {@link STACK_TAG_KEY} = this. */
  stackName: 'TXS_STACK_NAME',
  /** slurm: slurmrestd's base URL, e.g. `http://head:6820` (without it slurm only dry-runs). */
  slurmUrl: 'TXS_SLURM_URL',
  /** slurm: the Slurm user jobs are submitted as (`X-SLURM-USER-NAME`). */
  slurmUser: 'TXS_SLURM_USER',
  /** slurm: a token from `scontrol token` (takes precedence over a key). */
  slurmToken: 'TXS_SLURM_TOKEN',
  /** slurm: a file holding the cluster's JWT key (`jwt_key=`); short-lived HS256 tokens are signed from it. */
  slurmJwtKeyFile: 'TXS_SLURM_JWT_KEY_FILE',
  /** slurm: the cluster's JWT key, base64 (the deployed stack fills it from a secret). */
  slurmJwtKey: 'TXS_SLURM_JWT_KEY',
  /** slurm: a Secrets Manager secret holding the JWT key (base64 SecretString or SecretBinary); the stack's way. */
  slurmJwtKeySecretArn: 'TXS_SLURM_JWT_KEY_SECRET_ARN',
  /** slurm: the working directory of jobs without `job_dir` (default /tmp, on the cluster). */
  slurmWorkDir: 'TXS_SLURM_WORKDIR',
  /** slurm: where this server sees the cluster's shared filesystem, to read job output files (default /). */
  slurmLogRoot: 'TXS_SLURM_LOG_ROOT',
  /** slurm: `true` for Slurm >= 24.11 (`--gpus-per-node` instead of `--gpus-per-task`). */
  slurmGpusPerNode: 'TXS_SLURM_GPUS_PER_NODE',
  /** kubernetes, kubernetes_mcad: a JSON kubeconfig whose current context is the cluster (local mode). */
  kubeconfig: 'TXS_KUBECONFIG',
  /** kubernetes, kubernetes_mcad: the EKS cluster name (EKS tokens from the function's IAM role). */
  eksCluster: 'TXS_EKS_CLUSTER',
  /** kubernetes, kubernetes_mcad: the EKS cluster's API endpoint (https://…eks.amazonaws.com). */
  eksEndpoint: 'TXS_EKS_ENDPOINT',
  /** kubernetes, kubernetes_mcad: the EKS cluster's CA (certificateAuthority.data, base64). */
  eksCaData: 'TXS_EKS_CA_DATA',
  /** kubernetes, kubernetes_mcad: the namespace `list` reads (default: the kubeconfig's, else default). */
  kubeNamespace: 'TXS_K8S_NAMESPACE',
} as const;

/** Tag key every Batch job, job definition and SageMaker training job launched by a stack carries. */
export const STACK_TAG_KEY = 'torchx-serverless:stack';

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
