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
  /** Days to keep finished app records (DynamoDB TTL). */
  retentionDays: 'TXS_RETENTION_DAYS',
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
