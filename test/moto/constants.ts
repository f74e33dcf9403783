/** Names and settings shared by the moto suite's global setup and its test files. */

/** The region every client of the suite (and the local server's) talks to moto in. */
export const MOTO_REGION = 'us-east-1';
/** moto accepts any credentials; these are never real. */
export const MOTO_CREDENTIALS = { accessKeyId: 'moto', secretAccessKey: 'moto' } as const;
/** The Batch job queue the global setup creates. */
export const MOTO_QUEUE = 'txs-moto-queue';
/** The log groups Batch (`/aws/batch/job`, the default awslogs group) and SageMaker write to. */
export const MOTO_LOG_GROUPS = ['/aws/batch/job', '/aws/sagemaker/TrainingJobs'] as const;
/** A SageMaker execution role ARN (moto does not check that it exists). */
export const MOTO_SAGEMAKER_ROLE = 'arn:aws:iam::123456789012:role/txs-moto-sagemaker';
/** The EventBridge bus the global setup creates, and the log group its AppState Change rule delivers to. */
export const MOTO_EVENT_BUS = 'txs-moto-bus';
/** Where the bus's rule for `AppState Change` events puts them (moto delivers rule targets to log groups). */
export const MOTO_EVENTS_LOG_GROUP = '/aws/events/txs-moto-app-state';
