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
} as const;
