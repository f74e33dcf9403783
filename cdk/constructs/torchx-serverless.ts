/**
 * `TorchxServerless`: the whole control plane as one construct that any CDK app can embed: the app table,
 * one function per API route and per event source, the IAM-authorized REST API, the EventBridge rules that
 * turn Batch and SageMaker state changes into record transitions (with retries and a dead-letter queue), the
 * bus the normalized `AppState Change` events go to, the reconciler schedule and the alarms.
 *
 * @module
 */
import { ArnFormat, Duration, RemovalPolicy, Stack, Token, Validations } from 'aws-cdk-lib';
import {
  AccessLogFormat,
  AuthorizationType,
  type DomainName,
  EndpointType,
  LambdaIntegration,
  LogGroupLogDestination,
  MethodLoggingLevel,
  ResponseType,
  RestApi,
} from 'aws-cdk-lib/aws-apigateway';
import { Alarm, ComparisonOperator, type Dashboard, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import {
  AttributeType,
  BillingMode,
  type ITable,
  ProjectionType,
  StreamViewType,
  Table,
} from 'aws-cdk-lib/aws-dynamodb';
import type { ISecurityGroup, IVpc, SubnetSelection } from 'aws-cdk-lib/aws-ec2';
import { EventBus, type IEventBus, Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { Grant, type IGrantable, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { Function as LambdaFn } from 'aws-cdk-lib/aws-lambda';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { CfnWebACLAssociation } from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import { EVENT_FUNCTIONS, FUNCTIONS, ROUTES } from '../../functions/routes.js';
import { batchNamePrefix, ENV } from '../../functions/shared/env-names.js';
import { APP_TABLE } from '../../lib/store/table.js';
import { type AccessTargets, FUNCTION_ACCESS, grantAccess } from './access.js';
import { addCustomDomain, type CustomDomainOptions } from './custom-domain.js';
import { addDashboard, type DashboardOptions } from './dashboard.js';
import { functionCode } from './function-code.js';
import { HandlerFunction } from './handler-function.js';
import { Outbox, queueNotEmptyAlarm } from './outbox.js';
import {
  applyReservedConcurrency,
  checkEach,
  type SecurityProps,
  securityEnvironment,
  securityIssues,
  stackTagOf,
} from './security.js';

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
 * Props of {@link TorchxServerless}. Every prop is optional; the defaults deploy a working control plane. The
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
   * What happens to the app table (and the stack's log groups) when the stack is deleted: RETAIN or DESTROY.
   * With RETAIN the table also gets deletion protection.
   * @default RemovalPolicy.RETAIN
   */
  readonly tableRemovalPolicy?: RemovalPolicy;
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
   * esbuild bundles at synth time). Set it to deploy handlers from a clone instead of the prebuilt bundles.
   * @default - the prebuilt bundles of the installed package (`dist/lambda/<name>`); in a clone of the
   * repository, its sources
   */
  readonly projectRoot?: string;
}

const API_TIMEOUT = Duration.seconds(28);

/**
 * The torchx-serverless control plane.
 *
 * @example
 * ```ts
 * const txs = new TorchxServerless(this, 'Txs', {
 *   stageName: 'prod',
 *   batchJobQueues: ['gpu-queue'],
 *   batchJobRoleArns: ['arn:aws:iam::123456789012:role/TrainingJobRole'],
 *   sageMakerExecutionRoleArns: ['arn:aws:iam::123456789012:role/SageMakerTraining'],
 * });
 * new CfnOutput(this, 'Endpoint', { value: txs.api.url });
 * ```
 */
export class TorchxServerless extends Construct {
  /** The app record table (the `table` prop, or a new table). */
  readonly table: ITable;
  /** The IAM-authorized REST API. */
  readonly api: RestApi;
  /** The bus that receives normalized `AppState Change` events (the `eventBus` prop, or a new bus). */
  readonly eventBus: IEventBus;
  /** Where state-change events go when delivery or processing keeps failing. */
  readonly deadLetterQueue: Queue;
  /** Every function, by name (the route names of `functions/routes.ts`, `StateChange`, `Reconciler`). */
  readonly functions: Readonly<Record<string, LambdaFn>>;
  /** Every alarm. */
  readonly alarms: readonly Alarm[];
  /** The table stream → publisher wiring, with its dead-letter queue. */
  readonly outbox: Outbox;
  /** The custom domain, with the `customDomain` prop. */
  readonly domainName?: DomainName;
  /** The dashboard, with the `dashboard` prop. */
  readonly dashboard?: Dashboard;

  constructor(scope: Construct, id: string, props: TorchxServerlessProps = {}) {
    super(scope, id);
    const stack = Stack.of(this);
    const stageName = props.stageName ?? 'dev';
    const schedulers =
      props.schedulers ??
      (props.batchJobQueues === undefined ? ['aws_sagemaker'] : ['aws_batch', 'aws_sagemaker']);
    const removalPolicy = props.tableRemovalPolicy ?? RemovalPolicy.RETAIN;
    const logRetention = props.logRetention ?? RetentionDays.ONE_MONTH;
    validateProps(props);
    const queueArns = props.batchJobQueues?.map((queue) => jobQueueArn(stack, queue));

    // ---------------------------------------------------------------- table
    this.table = props.table ?? newAppTable(this, removalPolicy);

    // ---------------------------------------------------------------- events out, dead letters
    this.eventBus =
      props.eventBus ??
      new EventBus(this, 'Events', props.eventBusName ? { eventBusName: props.eventBusName } : {});
    this.deadLetterQueue = new Queue(this, 'StateChangeDeadLetters', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    Validations.of(this.deadLetterQueue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason:
        'This queue is itself the dead-letter queue of the state-change rules and function; it is alarmed on and read by operators.',
    });

    // ---------------------------------------------------------------- functions
    const environment: Record<string, string> = {
      [ENV.tableName]: this.table.tableName,
      [ENV.eventBusName]: this.eventBus.eventBusName,
      [ENV.schedulers]: schedulers.join(','),
      // No NODE_OPTIONS=--enable-source-maps: decoding the map at start-up costs every cold start (see
      // docs/performance.md); the bundles keep their .map files to decode stack traces offline.
    };
    if (props.batchJobQueues !== undefined) environment[ENV.batchQueues] = props.batchJobQueues.join(',');
    if (props.sessionName !== undefined) environment[ENV.sessionName] = props.sessionName;
    if (props.recordRetentionDays !== undefined)
      environment[ENV.retentionDays] = String(props.recordRetentionDays);
    // ---- security settings (cdk/constructs/security.ts, docs/security.md)
    Object.assign(environment, securityEnvironment(props, stack.stackName));
    const slurm = schedulers.includes('slurm') ? props.slurm : undefined;
    if (slurm !== undefined) {
      environment[ENV.slurmUrl] = slurm.restUrl;
      environment[ENV.slurmUser] = slurm.user;
      environment[ENV.slurmJwtKeySecretArn] = slurm.jwtKeySecretArn;
      if (slurm.workDir !== undefined) environment[ENV.slurmWorkDir] = slurm.workDir;
    }

    const targets: AccessTargets = {
      table: this.table,
      eventBus: this.eventBus,
      ...(schedulers.includes('aws_batch')
        ? {
            batch: {
              jobQueueArns: queueArns ?? [],
              jobRoleArns: props.batchJobRoleArns ?? [],
              namePrefix: batchNamePrefix(stack.stackName),
            },
          }
        : {}),
      ...(schedulers.includes('aws_sagemaker')
        ? { sageMaker: { executionRoleArns: props.sageMakerExecutionRoleArns ?? [] } }
        : {}),
      logGroupNames: props.jobLogGroupNames ?? DEFAULT_JOB_LOG_GROUPS,
      stackTag: stackTagOf(stack.stackName),
      privilegedAllowed: props.hostAccess?.privileged === true,
      ...(props.sageMakerInstanceTypes === undefined
        ? {}
        : { sageMakerInstanceTypes: props.sageMakerInstanceTypes }),
    };
    const functions: Record<string, LambdaFn> = {};
    const placement =
      props.vpc === undefined
        ? {}
        : {
            vpc: props.vpc,
            ...(props.vpcSubnets === undefined ? {} : { vpcSubnets: props.vpcSubnets }),
            ...(props.securityGroups === undefined ? {} : { securityGroups: props.securityGroups }),
          };
    const makeFunction = (name: string, entry: string, description: string, timeout: Duration) => {
      const handler = new HandlerFunction(this, name, {
        entry,
        ...functionCode(name, entry, props.projectRoot),
        description,
        environment,
        logRetention,
        logRemovalPolicy: removalPolicy,
        timeout,
        ...placement,
        ...((props.functionMemorySize?.[name] ?? props.memorySize) === undefined
          ? {}
          : { memorySize: props.functionMemorySize?.[name] ?? props.memorySize }),
        ...(props.provisionedConcurrency?.[name] === undefined
          ? {}
          : { provisionedConcurrency: props.provisionedConcurrency[name] }),
      });
      grantAccess(handler.role, FUNCTION_ACCESS[name] ?? {}, targets);
      applyReservedConcurrency(
        handler.function,
        name,
        ROUTES.some((route) => route.name === name),
        props.reservedConcurrency,
      );
      // functions that call schedulers (they describe Batch jobs) read the Slurm key, on exactly its secret
      if (slurm !== undefined && FUNCTION_ACCESS[name]?.batch !== undefined) {
        handler.role.addToPrincipalPolicy(
          new PolicyStatement({
            actions: ['secretsmanager:GetSecretValue'],
            resources: [slurm.jwtKeySecretArn],
          }),
        );
      }
      acknowledgeFunctionFindings(handler);
      functions[name] = handler.function;
      return handler.invokable;
    };

    // ---------------------------------------------------------------- REST API
    const cloudWatchRole = props.apiGatewayCloudWatchRole ?? false;
    // Access and execution logs need the account's API Gateway CloudWatch role (docs/security.md).
    const apiLogging = props.apiLogging ?? cloudWatchRole;
    const accessLogs = apiLogging
      ? new LogGroup(this, 'ApiAccessLogs', { retention: logRetention, removalPolicy })
      : undefined;
    this.api = new RestApi(this, 'Api', {
      restApiName: `torchx-serverless-${stageName}`,
      description: 'torchx-serverless: run, watch and manage training jobs on AWS Batch and SageMaker',
      endpointTypes: [EndpointType.REGIONAL],
      cloudWatchRole,
      defaultMethodOptions: { authorizationType: AuthorizationType.IAM },
      deployOptions: {
        stageName,
        throttlingRateLimit: props.throttlingRateLimit ?? 50,
        throttlingBurstLimit: props.throttlingBurstLimit ?? 100,
        loggingLevel: apiLogging ? MethodLoggingLevel.ERROR : MethodLoggingLevel.OFF,
        dataTraceEnabled: false,
        metricsEnabled: true,
        tracingEnabled: true,
        ...(accessLogs === undefined
          ? {}
          : {
              accessLogDestination: new LogGroupLogDestination(accessLogs),
              accessLogFormat: AccessLogFormat.jsonWithStandardFields({
                caller: true,
                httpMethod: true,
                ip: true,
                protocol: true,
                requestTime: true,
                resourcePath: true,
                responseLength: true,
                status: true,
                user: true,
              }),
            }),
      },
    });
    // The stack outputs the URL under a stable name (ApiUrl); an embedding app chooses its own outputs.
    this.api.node.tryRemoveChild('Endpoint');
    // API Gateway's own errors (bad signature, throttling, …) in the API's error shape.
    for (const [id, type] of [
      ['Default4xx', ResponseType.DEFAULT_4XX],
      ['Default5xx', ResponseType.DEFAULT_5XX],
    ] as const) {
      this.api.addGatewayResponse(id, {
        type,
        templates: {
          'application/json':
            '{"error":{"code":"$context.error.responseType","message":$context.error.messageString,"requestId":"$context.requestId"}}',
        },
      });
    }
    // API Gateway checks the path parameters; the handlers validate bodies (zod), so that the deployed stack
    // and local mode answer bad input with the same errors.
    const validator = this.api.addRequestValidator('PathParameters', {
      validateRequestParameters: true,
      validateRequestBody: false,
    });
    for (const route of ROUTES) {
      const fn = makeFunction(route.name, route.entry, `${route.method} ${route.path}`, API_TIMEOUT);
      const pathParameters = [...route.path.matchAll(/\{(\w+)\}/g)].map((match) => match[1] ?? '');
      this.api.root
        .resourceForPath(route.path)
        .addMethod(
          route.method,
          new LambdaIntegration(fn, { allowTestInvoke: false, timeout: Duration.seconds(29) }),
          {
            authorizationType: AuthorizationType.IAM,
            requestValidator: validator,
            requestParameters: Object.fromEntries(
              pathParameters.map((name) => [`method.request.path.${name}`, true]),
            ),
          },
        );
    }
    Validations.of(this.api).acknowledge(
      {
        id: 'AwsSolutions-APIG2',
        reason:
          'API Gateway validates the path parameters; the handlers validate every body with the API schema (zod) and answer 400 naming the field, exactly as local mode does.',
      },
      {
        id: 'AwsSolutions-COG4',
        reason: 'Every method uses IAM (SigV4) authorization: callers are IAM principals, not Cognito users.',
      },
      ...(props.webAclArn === undefined
        ? [
            {
              id: 'AwsSolutions-APIG3',
              reason:
                'Every method requires SigV4-signed IAM credentials and the stage is throttled; a WAF web ACL can be attached with the webAclArn prop.',
            },
          ]
        : []),
    );
    if (props.webAclArn !== undefined) {
      new CfnWebACLAssociation(this, 'ApiWebAcl', {
        resourceArn: this.api.deploymentStage.stageArn,
        webAclArn: props.webAclArn,
      });
    }
    if (!apiLogging) {
      Validations.of(this.api).acknowledge(
        {
          id: 'AwsSolutions-APIG1',
          reason:
            'API access logs need the account-wide API Gateway CloudWatch role, which this construct does not replace by default; set apiLogging (the account has a role) or apiGatewayCloudWatchRole. The functions log every request with its request id.',
        },
        {
          id: 'AwsSolutions-APIG6',
          reason:
            'Execution logs need the account-wide API Gateway CloudWatch role (see AwsSolutions-APIG1); stage metrics and X-Ray tracing stay on, and the functions log every request.',
        },
      );
    }
    if (cloudWatchRole) {
      Validations.of(this.api).acknowledge({
        id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
        reason:
          "API Gateway's account-wide logging role uses the AWS managed policy made for it; it serves every API in the account and Region.",
      });
    }

    // ---------------------------------------------------------------- state changes in
    const stateChange = makeFunction(
      EVENT_FUNCTIONS.stateChange.name,
      EVENT_FUNCTIONS.stateChange.entry,
      'Batch and SageMaker job state changes to app record transitions',
      Duration.seconds(60),
    );
    // EventBridge invokes Lambda asynchronously: Lambda retries a failed invocation twice, then sends the
    // invocation record to the dead-letter queue (the rule's DLQ only covers delivery failures).
    stateChange.configureAsyncInvoke({
      retryAttempts: 2,
      maxEventAge: Duration.hours(6),
      onFailure: new SqsDestination(this.deadLetterQueue),
    });
    const stateChangeTarget = () =>
      new LambdaFunction(stateChange, {
        deadLetterQueue: this.deadLetterQueue,
        retryAttempts: props.eventRetryAttempts ?? 10,
        maxEventAge: props.eventMaxAge ?? Duration.hours(2),
      });
    if (schedulers.includes('aws_batch')) {
      new Rule(this, 'BatchJobStateChange', {
        description: 'AWS Batch job state changes to the torchx-serverless state-change function',
        eventPattern: {
          source: ['aws.batch'],
          detailType: ['Batch Job State Change'],
          // `detail.jobQueue` is always the queue ARN: match only the queues jobs may be submitted to.
          ...(queueArns === undefined ? {} : { detail: { jobQueue: queueArns } }),
        },
        targets: [stateChangeTarget()],
      });
      // The job at the head of a queue cannot start (no capacity, a misconfiguration): its statusReason is
      // the reason every app waiting in that queue waits.
      new Rule(this, 'BatchJobQueueBlocked', {
        description: 'AWS Batch job queue blocked events to the torchx-serverless state-change function',
        eventPattern: {
          source: ['aws.batch'],
          detailType: ['Batch Job Queue Blocked'],
          ...(queueArns === undefined ? {} : { detail: { jobQueue: queueArns } }),
        },
        targets: [stateChangeTarget()],
      });
    }
    new Rule(this, 'SageMakerTrainingJobStateChange', {
      description: 'SageMaker training job state changes to the torchx-serverless state-change function',
      eventPattern: { source: ['aws.sagemaker'], detailType: ['SageMaker Training Job State Change'] },
      targets: [stateChangeTarget()],
    });

    // ---------------------------------------------------------------- reconciler
    const reconcileInterval = props.reconcileInterval ?? Duration.minutes(5);
    const reconciler = makeFunction(
      EVENT_FUNCTIONS.reconciler.name,
      EVENT_FUNCTIONS.reconciler.entry,
      'Refreshes non-terminal app records from the schedulers (lost events)',
      Duration.minutes(5),
    );
    // A missed run is covered by the next one: no retries.
    reconciler.configureAsyncInvoke({ retryAttempts: 0, maxEventAge: Duration.minutes(1) });
    new Rule(this, 'ReconcileSchedule', {
      description: 'Runs the torchx-serverless reconciler',
      schedule: Schedule.rate(reconcileInterval),
      targets: [new LambdaFunction(reconciler, { retryAttempts: 0 })],
    });
    // ---------------------------------------------------------------- outbox: committed changes out
    this.outbox = new Outbox(this, 'Outbox', {
      table: this.table,
      publisher: makeFunction(
        EVENT_FUNCTIONS.publisher.name,
        EVENT_FUNCTIONS.publisher.entry,
        'Publishes AppState Change events from the app table stream (the outbox)',
        Duration.seconds(60),
      ),
    });
    this.functions = functions;

    // ---------------------------------------------------------------- alarms
    const alarms: Alarm[] = [
      queueNotEmptyAlarm(
        this,
        'DeadLettersAlarm',
        this.deadLetterQueue,
        'State-change events could not be delivered or processed: read them from the dead-letter queue',
      ),
      new Alarm(this, 'ApiServerErrorsAlarm', {
        alarmDescription: 'The API answered 5xx: see the function logs (errors carry the request id)',
        metric: this.api.metricServerError({ period: Duration.minutes(5), statistic: 'Sum' }),
        threshold: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
      ...this.outbox.alarms,
    ];
    for (const [name, fn] of Object.entries(functions)) {
      alarms.push(
        new Alarm(this, `${name}ErrorsAlarm`, {
          alarmDescription: `The ${name} function failed (uncaught error, timeout or out of memory)`,
          metric: fn.metricErrors({ period: Duration.minutes(5), statistic: 'Sum' }),
          threshold: 1,
          comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
          evaluationPeriods: 1,
          treatMissingData: TreatMissingData.NOT_BREACHING,
        }),
      );
    }
    if (props.alarmTopic !== undefined) {
      const action = new SnsAction(props.alarmTopic);
      for (const alarm of alarms) alarm.addAlarmAction(action);
    }
    this.alarms = alarms;

    // ---------------------------------------------------------------- custom domain, dashboard
    if (props.customDomain !== undefined)
      this.domainName = addCustomDomain(this, this.api, props.customDomain);
    if (props.dashboard !== undefined && props.dashboard !== false) {
      this.dashboard = addDashboard(
        this,
        { api: this.api, functions, deadLetterQueue: this.deadLetterQueue, table: this.table },
        props.dashboard === true ? {} : props.dashboard,
      );
    }
  }

  /**
   * Lets `grantee` call every route of the API (`execute-api:Invoke` on this stage), e.g. the role of a
   * training pipeline or of the people who run `txs`.
   */
  grantInvoke(grantee: IGrantable): Grant {
    return Grant.addToPrincipal({
      grantee,
      actions: ['execute-api:Invoke'],
      resourceArns: [this.api.arnForExecuteApi('*', '/*', this.api.deploymentStage.stageName)],
    });
  }
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

/** cdk-nag findings every function has, acknowledged with the reason. */
function acknowledgeFunctionFindings(handler: HandlerFunction): void {
  Validations.of(handler).acknowledge(
    {
      id: 'AwsSolutions-L1',
      reason:
        'Node.js 22 is pinned deliberately: the bundles target node22 and the project is tested on it; newer runtimes are adopted with a tested upgrade.',
    },
    {
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'X-Ray PutTraceSegments and PutTelemetryRecords (active tracing) support no resource-level permissions; neither do the read-only AWS Batch ListJobs/DescribeJobs/DescribeJobDefinitions.',
    },
  );
}

const ROLE_ARN = /^arn:aws[a-z-]*:iam::\d{12}:role\/[\w+=,.@/-]{1,512}$/;
const QUEUE_NAME = /^[A-Za-z0-9_-]{1,128}$/;
const QUEUE_ARN = /^arn:aws[a-z-]*:batch:[a-z0-9-]+:\d{12}:job-queue\/[A-Za-z0-9_-]{1,128}$/;
const STAGE_NAME = /^[A-Za-z0-9_-]{1,128}$/;
const REMOVAL_POLICIES: ReadonlySet<RemovalPolicy> = new Set([RemovalPolicy.RETAIN, RemovalPolicy.DESTROY]);

/** One problem with a prop: which one (`batchJobRoleArns.0`) and what is wrong with it. */
export interface PropIssue {
  readonly path: string;
  readonly message: string;
}

/** Thrown at synth time when {@link TorchxServerlessProps} would deploy a broken or over-privileged stack. */
export class TorchxServerlessPropsError extends Error {
  override readonly name = 'TorchxServerlessPropsError';
  /** Every problem found, each naming the prop. */
  readonly issues: readonly PropIssue[];

  constructor(issues: readonly PropIssue[]) {
    super(`Invalid TorchxServerless props: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`);
    this.issues = issues;
  }
}

/**
 * Checks the props before anything is built.
 *
 * @throws TorchxServerlessPropsError listing every problem, each with the prop and the fix.
 */
export function validateProps(props: TorchxServerlessProps): void {
  const issues: PropIssue[] = [];
  const eachOf = (
    name: string,
    values: readonly string[] | undefined,
    ok: (value: string) => boolean,
    expected: string,
  ) => checkEach(issues, name, values, ok, expected);
  const roleArn = 'an IAM role ARN such as arn:aws:iam::123456789012:role/TrainingJobRole';
  eachOf(
    'batchJobQueues',
    props.batchJobQueues,
    (v) => QUEUE_NAME.test(v) || QUEUE_ARN.test(v),
    'a job queue name or ARN',
  );
  eachOf('batchJobRoleArns', props.batchJobRoleArns, (v) => ROLE_ARN.test(v), roleArn);
  eachOf('sageMakerExecutionRoleArns', props.sageMakerExecutionRoleArns, (v) => ROLE_ARN.test(v), roleArn);
  if (props.batchJobQueues?.length === 0)
    issues.push({
      path: 'batchJobQueues',
      message: 'is empty; name at least one job queue, or leave it out to deploy without aws_batch',
    });
  if (props.schedulers?.includes('aws_batch') && props.batchJobQueues === undefined)
    issues.push({
      path: 'batchJobQueues',
      message:
        "is required with the aws_batch scheduler: name the job queues jobs may be submitted to (cdk deploy -c batchJobQueues=gpu-queue), or drop 'aws_batch' from schedulers",
    });
  issues.push(
    ...securityIssues(props, [
      ...ROUTES.map((route) => route.name),
      EVENT_FUNCTIONS.stateChange.name,
      EVENT_FUNCTIONS.reconciler.name,
    ]),
  );
  if (props.table !== undefined && props.table.tableStreamArn === undefined)
    issues.push({
      path: 'table',
      message:
        'has no stream: the outbox reads the table stream (NEW_AND_OLD_IMAGES); import the table with ' +
        'Table.fromTableAttributes(scope, id, { tableArn, tableStreamArn })',
    });
  if (props.tableRemovalPolicy !== undefined && !REMOVAL_POLICIES.has(props.tableRemovalPolicy))
    issues.push({
      path: 'tableRemovalPolicy',
      message: `DynamoDB tables and log groups support RETAIN or DESTROY, not ${props.tableRemovalPolicy}`,
    });
  if (props.schedulers?.length === 0)
    issues.push({
      path: 'schedulers',
      message: "is empty; name at least one of 'aws_batch', 'aws_sagemaker', 'slurm'",
    });
  for (const [i, scheduler] of (props.schedulers ?? []).entries()) {
    if (scheduler !== 'aws_batch' && scheduler !== 'aws_sagemaker' && scheduler !== 'slurm')
      issues.push({
        path: `schedulers.${i}`,
        message: `'${scheduler}' is not one of 'aws_batch', 'aws_sagemaker', 'slurm'`,
      });
  }
  if (props.schedulers?.includes('slurm') && props.slurm === undefined)
    issues.push({
      path: 'slurm',
      message: "is required when schedulers names 'slurm' (restUrl, user, jwtKeySecretArn)",
    });
  if (props.slurm !== undefined) {
    const { restUrl, jwtKeySecretArn } = props.slurm;
    if (!Token.isUnresolved(restUrl) && !/^https?:\/\/[^\s/]+/.test(restUrl))
      issues.push({
        path: 'slurm.restUrl',
        message: `'${restUrl}' is not an http(s) URL such as http://10.0.0.10:6820`,
      });
    if (
      !Token.isUnresolved(jwtKeySecretArn) &&
      !/^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:.+$/.test(jwtKeySecretArn)
    )
      issues.push({
        path: 'slurm.jwtKeySecretArn',
        message: `'${jwtKeySecretArn}' is not a Secrets Manager secret ARN (arn:aws:secretsmanager:<region>:<account>:secret:<name>)`,
      });
  }
  for (const [name, value] of [
    ['throttlingRateLimit', props.throttlingRateLimit],
    ['throttlingBurstLimit', props.throttlingBurstLimit],
    ['recordRetentionDays', props.recordRetentionDays],
    ['memorySize', props.memorySize],
  ] as const) {
    if (value !== undefined && !(Number.isFinite(value) && value > 0))
      issues.push({ path: name, message: `must be a positive number, got ${value}` });
  }
  const retries = props.eventRetryAttempts;
  if (retries !== undefined && !(Number.isInteger(retries) && retries >= 0 && retries <= 185))
    issues.push({
      path: 'eventRetryAttempts',
      message: `must be a whole number from 0 to 185, got ${retries}`,
    });
  if (props.stageName !== undefined && !STAGE_NAME.test(props.stageName))
    issues.push({
      path: 'stageName',
      message: `'${props.stageName}' may contain only letters, digits, '-' and '_' (1 to 128 characters)`,
    });
  for (const [prop, values, min] of [
    ['functionMemorySize', props.functionMemorySize, 128],
    ['provisionedConcurrency', props.provisionedConcurrency, 1],
  ] as const) {
    for (const [name, value] of Object.entries(values ?? {})) {
      if (!FUNCTIONS.some((fn) => fn.name === name))
        issues.push({
          path: `${prop}.${name}`,
          message: `no function is named '${name}'; use one of ${FUNCTIONS.map((fn) => fn.name).join(', ')}`,
        });
      else if (!(Number.isInteger(value) && value >= min))
        issues.push({
          path: `${prop}.${name}`,
          message: `must be a whole number of at least ${min}, got ${value}`,
        });
    }
  }
  if (issues.length > 0) throw new TorchxServerlessPropsError(issues);
}

/** The app record table of `lib/store/table.ts`, with the stream the outbox reads. */
function newAppTable(scope: Construct, removalPolicy: RemovalPolicy): Table {
  const attributeType = (type: 'S' | 'N') => (type === 'S' ? AttributeType.STRING : AttributeType.NUMBER);
  const table = new Table(scope, 'Apps', {
    partitionKey: { name: APP_TABLE.partitionKey.name, type: AttributeType.STRING },
    sortKey: { name: APP_TABLE.sortKey.name, type: AttributeType.STRING },
    billingMode: BillingMode.PAY_PER_REQUEST,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    timeToLiveAttribute: APP_TABLE.timeToLiveAttribute,
    removalPolicy,
    deletionProtection: removalPolicy !== RemovalPolicy.DESTROY,
    // The outbox: committed record changes feed the publisher function (see ./outbox.ts).
    stream: StreamViewType.NEW_AND_OLD_IMAGES,
  });
  for (const index of APP_TABLE.indexes) {
    table.addGlobalSecondaryIndex({
      indexName: index.name,
      partitionKey: { name: index.partitionKey.name, type: attributeType(index.partitionKey.type) },
      sortKey: { name: index.sortKey.name, type: attributeType(index.sortKey.type) },
      projectionType: index.projection === 'ALL' ? ProjectionType.ALL : ProjectionType.KEYS_ONLY,
    });
  }
  return table;
}
