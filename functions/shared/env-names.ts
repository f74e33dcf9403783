/**
 * Names of the environment variables the functions read. Shared with the CDK stack (the one file of
 * functions/ that cdk/ imports), so names cannot drift.
 */
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
  /** umask (octal) local_cwd replicas run with: the server's own umask before it tightened it (local mode only). */
  localReplicaUmask: 'TXS_LOCAL_REPLICA_UMASK',
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
} as const;

/** Tag key every Batch job, job definition and SageMaker training job launched by a stack carries. */
export const STACK_TAG_KEY = 'torchx-serverless:stack';
