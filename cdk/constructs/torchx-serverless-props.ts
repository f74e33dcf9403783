/**
 * The props of the `TorchxServerless` construct and their defaults: every prop is optional, and
 * {@link settingsOf} applies the defaults once, for every part of the construct.
 *
 * @module
 */
import { ArnFormat, Duration, RemovalPolicy, type Stack, Token } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { ISecurityGroup, IVpc, SubnetSelection } from 'aws-cdk-lib/aws-ec2';
import type { IEventBus } from 'aws-cdk-lib/aws-events';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { DEFAULT_WORKSPACE_DAYS } from '../../functions/shared/env-names.js';
import type { CustomDomainOptions } from './custom-domain.js';
import type { DashboardOptions } from './dashboard.js';
import type { SecurityProps } from './security.js';

/** The schedulers the deployed functions can run jobs on. */
export type DeployedScheduler = 'aws_batch' | 'aws_sagemaker' | 'slurm';

/** Where the deployed `slurm` scheduler submits (see docs/schedulers/slurm.md). */
export interface SlurmClusterProps {
  /** slurmrestd's base URL, e.g. `http://10.0.0.10:6820` (reaching it needs the functions in the cluster's VPC). */
  readonly restUrl: string;
  /** The Slurm user jobs are submitted as. */
  readonly user: string;
  /** Secrets Manager secret holding the cluster's JWT key (base64 SecretString, or SecretBinary). */
  readonly jwtKeySecretArn: string;
  /** Working directory of jobs without `job_dir`, on the cluster. @default '/tmp' */
  readonly workDir?: string;
}

/** The job log groups read by default: AWS Batch's and SageMaker training's. */
export const DEFAULT_JOB_LOG_GROUPS: readonly string[] = ['/aws/batch/job', '/aws/sagemaker/TrainingJobs'];

/**
 * Props of `TorchxServerless`. Every prop is optional; the defaults deploy a working control plane. The
 * security props (admins, owners, host access, instance types, reserved concurrency, API logging) are in
 * {@link SecurityProps}.
 */
export interface TorchxServerlessProps extends SecurityProps {
  /**
   * API Gateway stage name; also names the REST API (`torchx-serverless-<stage>`).
   * @default 'dev'
   */
  readonly stageName?: string;
  /**
   * Schedulers the functions offer (`TXS_SCHEDULERS`). IAM for a scheduler is granted only when it is here.
   * `aws_batch` needs `batchJobQueues`.
   * @default ['aws_batch', 'aws_sagemaker'] with batchJobQueues, ['aws_sagemaker'] without
   */
  readonly schedulers?: readonly DeployedScheduler[];
  /** The Slurm cluster of the `slurm` scheduler; required when `schedulers` names `slurm`. */
  readonly slurm?: SlurmClusterProps;
  /**
   * AWS Batch job queues (names or ARNs) jobs may be submitted to. SubmitJob is allowed on exactly these, the
   * state-change rule only matches their jobs, and the functions list them (`TXS_BATCH_QUEUES`). Required for
   * the `aws_batch` scheduler: without queues the stack has no Batch scheduler and no Batch permissions.
   * @default - none (no aws_batch)
   */
  readonly batchJobQueues?: readonly string[];
  /**
   * IAM roles that Batch job definitions may name as job role or execution role (`job_role_arn`,
   * `execution_role_arn`). `iam:PassRole` is granted on exactly these, passed to `batch.amazonaws.com` only.
   * @default - none: jobs run without a job role (EC2 compute only; Fargate needs an execution role)
   */
  readonly batchJobRoleArns?: readonly string[];
  /**
   * IAM roles SageMaker training jobs may run as (`role_arn`). `iam:PassRole` is granted on exactly these,
   * passed to `sagemaker.amazonaws.com` only.
   * @default - none: SageMaker runs fail with AccessDenied until a role is configured
   */
  readonly sageMakerExecutionRoleArns?: readonly string[];
  /**
   * CloudWatch Logs log groups the logs route may read (Batch jobs with a custom `log_group` need theirs here).
   * @default DEFAULT_JOB_LOG_GROUPS (`/aws/batch/job`, `/aws/sagemaker/TrainingJobs`)
   */
  readonly jobLogGroupNames?: readonly string[];
  /**
   * What happens to the app table (and the stack's log groups and workspace bucket) when the stack is
   * deleted: RETAIN or DESTROY. With RETAIN the table also gets deletion protection; with DESTROY the
   * workspace bucket is emptied first (CDK's auto-delete custom resource).
   * @default RemovalPolicy.RETAIN
   */
  readonly tableRemovalPolicy?: RemovalPolicy;
  /**
   * How long the workspace bucket keeps an archive after its upload (whole days, at least 2): its lifecycle
   * rule, and `TXS_WORKSPACE_DAYS`. An archive older than half of this is uploaded again by the next run that
   * uses it, so a job queued with it still finds it when it starts. The bucket exists when the stack has the
   * `aws_batch` or `aws_sagemaker` scheduler.
   * @default Duration.days(30)
   */
  readonly workspaceExpiration?: Duration;
  /** Days to keep finished app records before DynamoDB TTL removes them (`TXS_RETENTION_DAYS`). @default - the store's default */
  readonly recordRetentionDays?: number;
  /** Default session name of new app handles (`TXS_SESSION_NAME`). @default - the functions' default, `torchx` */
  readonly sessionName?: string;
  /** Steady-state requests per second the API stage accepts. @default 50 */
  readonly throttlingRateLimit?: number;
  /** Request burst the API stage accepts. @default 100 */
  readonly throttlingBurstLimit?: number;
  /** How often the reconciler refreshes non-terminal records from the schedulers. @default 5 minutes */
  readonly reconcileInterval?: Duration;
  /** How long the functions' and the API's logs are kept. @default RetentionDays.ONE_MONTH */
  readonly logRetention?: RetentionDays;
  /** Memory of each function in MB. @default 512 */
  readonly memorySize?: number;
  /** Name of the bus for normalized `AppState Change` events. @default - generated by CloudFormation */
  readonly eventBusName?: string;
  /**
   * Times EventBridge retries delivering a state-change event to the function before it goes to the DLQ.
   * @default 10
   */
  readonly eventRetryAttempts?: number;
  /** Age after which an undelivered state-change event goes to the dead-letter queue. @default 2 hours */
  readonly eventMaxAge?: Duration;
  /** SNS topic that every alarm notifies. @default - alarms only change state */
  readonly alarmTopic?: ITopic;
  /** WAFv2 web ACL (REGIONAL scope) to associate with the API stage. @default - none */
  readonly webAclArn?: string;
  /**
   * Create the account-wide role that lets API Gateway write logs (`AWS::ApiGateway::Account`). It replaces
   * whatever role the account's API Gateway uses in this Region, for every API, so it is off by default.
   * Turning it on also turns on `apiLogging`.
   * @default false
   */
  readonly apiGatewayCloudWatchRole?: boolean;
  // ---------------------------------------------------------------- placement, sizing, domain, dashboard
  /** VPC to place every function in (e.g. to reach the AWS APIs through VPC endpoints). @default - no VPC */
  readonly vpc?: IVpc;
  /** Subnets of `vpc` for the functions. @default - the VPC's private subnets */
  readonly vpcSubnets?: SubnetSelection;
  /** Security groups of the functions in `vpc`. @default - one per function, created by Lambda, all outbound */
  readonly securityGroups?: readonly ISecurityGroup[];
  /**
   * Memory in MB by function name (`Run`, `Status`, `StateChange`, …: the names of `functions/routes.ts`),
   * over `memorySize`.
   * @default - `memorySize` for every function
   */
  readonly functionMemorySize?: Readonly<Record<string, number>>;
  /**
   * Provisioned concurrency by function name: each named function gets a `live` alias with that many
   * initialized environments, and the API (or rule) invokes the alias.
   * @default - none: every function is on demand
   */
  readonly provisionedConcurrency?: Readonly<Record<string, number>>;
  /** A custom domain name for the API (name, ACM certificate, base path). @default - the execute-api URL only */
  readonly customDomain?: CustomDomainOptions;
  /**
   * An existing bus to put the normalized `AppState Change` events on, instead of a new one (`eventBusName`
   * is then ignored).
   * @default - a new bus
   */
  readonly eventBus?: IEventBus;
  /**
   * An existing app record table, instead of a new one. It must have the layout of `lib/store/table.ts`
   * (`APP_TABLE`: keys `pk`/`sk`, the `byOwner`, `byNativeName`, `byActive` and `byCreated` indexes, TTL on
   * `expiresAt`) and a stream of new and old images, which the outbox reads: import it with
   * `Table.fromTableAttributes(this, 'Apps', { tableArn, tableStreamArn })`. `tableRemovalPolicy` does not
   * apply to it.
   * @default - a new table (on demand, point-in-time recovery, deletion protection)
   */
  readonly table?: ITable;
  /**
   * A CloudWatch dashboard of the deployment's metrics: `true`, or its options.
   * @default false
   */
  readonly dashboard?: boolean | DashboardOptions;
  /**
   * Repository root holding `functions/`, `lib/`, `package-lock.json` and `node_modules` (the handler sources
   * rolldown bundles at synth time). Set it to deploy handlers from a clone instead of the prebuilt bundles.
   * @default - the prebuilt bundles of the installed package (`dist/lambda/<name>`); in a clone of the
   * repository, its sources
   */
  readonly projectRoot?: string;
}

/** The props with their defaults applied: what the parts of the construct are built from. */
export interface Settings {
  readonly stageName: string;
  readonly schedulers: readonly DeployedScheduler[];
  /** Of the app table and of every log group. */
  readonly removalPolicy: RemovalPolicy;
  readonly logRetention: RetentionDays;
  /** `batchJobQueues` as ARNs. */
  readonly batchQueueArns?: readonly string[];
  /** The Slurm cluster, when the `slurm` scheduler is deployed. */
  readonly slurm?: SlurmClusterProps;
  readonly reconcileInterval: Duration;
  readonly throttlingRateLimit: number;
  readonly throttlingBurstLimit: number;
  readonly apiGatewayCloudWatchRole: boolean;
  /** API access and execution logs (on with `apiGatewayCloudWatchRole`). */
  readonly apiLogging: boolean;
  readonly eventRetryAttempts: number;
  readonly eventMaxAge: Duration;
  /** Days the workspace bucket keeps an archive; undefined: no bucket (no aws_batch or aws_sagemaker). */
  readonly workspaceDays?: number;
}

/** Applies the defaults of {@link TorchxServerlessProps} (documented on each prop). */
export function settingsOf(stack: Stack, props: TorchxServerlessProps): Settings {
  const schedulers: readonly DeployedScheduler[] =
    props.schedulers ??
    (props.batchJobQueues === undefined ? ['aws_sagemaker'] : ['aws_batch', 'aws_sagemaker']);
  const batchQueueArns = props.batchJobQueues?.map((queue) => jobQueueArn(stack, queue));
  const slurm = schedulers.includes('slurm') ? props.slurm : undefined;
  const apiGatewayCloudWatchRole = props.apiGatewayCloudWatchRole ?? false;
  return {
    stageName: props.stageName ?? 'dev',
    schedulers,
    removalPolicy: props.tableRemovalPolicy ?? RemovalPolicy.RETAIN,
    logRetention: props.logRetention ?? RetentionDays.ONE_MONTH,
    ...(batchQueueArns === undefined ? {} : { batchQueueArns }),
    ...(slurm === undefined ? {} : { slurm }),
    reconcileInterval: props.reconcileInterval ?? Duration.minutes(5),
    throttlingRateLimit: props.throttlingRateLimit ?? 50,
    throttlingBurstLimit: props.throttlingBurstLimit ?? 100,
    apiGatewayCloudWatchRole,
    // Access and execution logs need the account's API Gateway CloudWatch role (docs/security.md).
    apiLogging: props.apiLogging ?? apiGatewayCloudWatchRole,
    eventRetryAttempts: props.eventRetryAttempts ?? 10,
    eventMaxAge: props.eventMaxAge ?? Duration.hours(2),
    ...(schedulers.includes('aws_batch') || schedulers.includes('aws_sagemaker')
      ? { workspaceDays: (props.workspaceExpiration ?? Duration.days(DEFAULT_WORKSPACE_DAYS)).toDays() }
      : {}),
  };
}

/** A queue's ARN from its name or ARN (ARNs pass through). */
export function jobQueueArn(stack: Stack, queue: string): string {
  if (queue.startsWith('arn:') || Token.isUnresolved(queue)) return queue;
  return stack.formatArn({
    service: 'batch',
    resource: 'job-queue',
    resourceName: queue,
    arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
  });
}
