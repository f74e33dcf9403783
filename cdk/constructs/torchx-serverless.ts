/**
 * `TorchxServerless`: the whole control plane as one construct that any CDK app can embed: the app table,
 * one function per API route and per event source, the IAM-authorized REST API, the EventBridge rules that
 * turn Batch and SageMaker state changes into record transitions (with retries and a dead-letter queue), the
 * bus the normalized `AppState Change` events go to, the reconciler schedule and the alarms.
 *
 * This module only composes; each part is built in its own module: the props and their defaults
 * (./torchx-serverless-props.ts) and checks (./validate-props.ts), the table (./app-table.ts), the functions
 * (./control-plane-functions.ts), the API (./api.ts), the state-change rules (./state-change-rules.ts), the
 * reconciler's schedule (./reconcile-schedule.ts), the outbox (./outbox.ts), the alarms (./alarms.ts), the
 * custom domain and the dashboard. Every resource is a direct child of this construct, or of the part named
 * after it (the table, the API, the schedule), exactly as when this was one module: CloudFormation logical ids
 * derive from construct paths, and a changed id replaces the resource: a new, empty table, a new API URL.
 * Parts that add several sibling resources (the rules, the alarms) add them to this construct for that reason.
 *
 @module
 */

import { Duration, Stack } from 'aws-cdk-lib';
import type { DomainName, RestApi } from 'aws-cdk-lib/aws-apigateway';
import type { Alarm, Dashboard } from 'aws-cdk-lib/aws-cloudwatch';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { EventBus, type IEventBus } from 'aws-cdk-lib/aws-events';
import { Grant, type IGrantable } from 'aws-cdk-lib/aws-iam';
import type { Function as LambdaFn } from 'aws-cdk-lib/aws-lambda';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import { CfnWebACLAssociation } from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import { EVENT_FUNCTIONS, ROUTES } from '../../functions/routes.js';
import { addAlarms } from './alarms.js';
import { ControlPlaneApi } from './api.js';
import { AppTable } from './app-table.js';
import { addFunctions } from './control-plane-functions.js';
import { addCustomDomain } from './custom-domain.js';
import { addDashboard } from './dashboard.js';
import { DeadLetterQueue } from './dead-letter-queue.js';
import type { HandlerFunction } from './handler-function.js';
import { Outbox } from './outbox.js';
import { ReconcileSchedule } from './reconcile-schedule.js';
import { addStateChangeRules } from './state-change-rules.js';
import { settingsOf, type TorchxServerlessProps } from './torchx-serverless-props.js';
import { validateProps } from './validate-props.js';
import { WorkspaceArchiveBucket } from './workspace-bucket.js';

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
  /**
   * The bucket of workspace archives (`txs run --workspace`), when the stack has the `aws_batch` or
   * `aws_sagemaker` scheduler. Grant a job role the construct does not know read of its archives with
   * `workspaceBucket.grantRead(role, 'workspaces/*')`.
   */
  readonly workspaceBucket?: WorkspaceArchiveBucket;
  /** The custom domain, with the `customDomain` prop. */
  readonly domainName?: DomainName;
  /** The dashboard, with the `dashboard` prop. */
  readonly dashboard?: Dashboard;

  constructor(scope: Construct, id: string, props: TorchxServerlessProps = {}) {
    super(scope, id);
    validateProps(props);
    const settings = settingsOf(Stack.of(this), props);

    // Stateful resources (the records, the bus, the dead letters) and the functions are this construct's
    // direct children: their logical ids are derived from these paths and must never change.
    this.table = props.table ?? new AppTable(this, 'Apps', { removalPolicy: settings.removalPolicy });
    this.eventBus =
      props.eventBus ??
      new EventBus(this, 'Events', props.eventBusName ? { eventBusName: props.eventBusName } : {});
    this.deadLetterQueue = new DeadLetterQueue(this, 'StateChangeDeadLetters', {
      role: 'This queue is itself the dead-letter queue of the state-change rules and function; it is alarmed on and read by operators.',
    });
    // Workspace archives of the AWS schedulers' runs; their job roles read them.
    if (settings.workspaceDays !== undefined) {
      this.workspaceBucket = new WorkspaceArchiveBucket(this, 'WorkspaceArchives', {
        expiration: Duration.days(settings.workspaceDays),
        removalPolicy: settings.removalPolicy,
        readerRoleArns: [
          ...(settings.schedulers.includes('aws_batch') ? (props.batchJobRoleArns ?? []) : []),
          ...(settings.schedulers.includes('aws_sagemaker') ? (props.sageMakerExecutionRoleArns ?? []) : []),
        ],
      });
    }
    const handlers = addFunctions(this, props, settings, {
      table: this.table,
      eventBus: this.eventBus,
      ...(this.workspaceBucket === undefined ? {} : { workspaceBucket: this.workspaceBucket }),
    });
    const invokable = (name: string) => handlerNamed(handlers, name).invokable;
    this.functions = Object.fromEntries(Object.entries(handlers).map(([name, h]) => [name, h.function]));

    // Requests in: the API, and its access logs when the account's API Gateway CloudWatch role allows them.
    const accessLogs = settings.apiLogging
      ? new LogGroup(this, 'ApiAccessLogs', {
          retention: settings.logRetention,
          removalPolicy: settings.removalPolicy,
        })
      : undefined;
    this.api = new ControlPlaneApi(this, 'Api', {
      stageName: settings.stageName,
      routeFunctions: Object.fromEntries(ROUTES.map((route) => [route.name, invokable(route.name)])),
      throttlingRateLimit: settings.throttlingRateLimit,
      throttlingBurstLimit: settings.throttlingBurstLimit,
      ...(accessLogs === undefined ? {} : { accessLogs }),
      cloudWatchRole: settings.apiGatewayCloudWatchRole,
      webAclAttached: props.webAclArn !== undefined,
    });
    if (props.webAclArn !== undefined) {
      new CfnWebACLAssociation(this, 'ApiWebAcl', {
        resourceArn: this.api.deploymentStage.stageArn,
        webAclArn: props.webAclArn,
      });
    }

    // Scheduler events in, lost events caught up, committed changes out.
    addStateChangeRules(this, {
      stateChange: invokable(EVENT_FUNCTIONS.stateChange.name),
      deadLetterQueue: this.deadLetterQueue,
      batch: settings.schedulers.includes('aws_batch'),
      ...(settings.batchQueueArns === undefined ? {} : { batchQueueArns: settings.batchQueueArns }),
      retryAttempts: settings.eventRetryAttempts,
      maxEventAge: settings.eventMaxAge,
    });
    new ReconcileSchedule(this, 'ReconcileSchedule', {
      reconciler: invokable(EVENT_FUNCTIONS.reconciler.name),
      interval: settings.reconcileInterval,
    });
    this.outbox = new Outbox(this, 'Outbox', {
      table: this.table,
      publisher: invokable(EVENT_FUNCTIONS.publisher.name),
    });

    // Watching it: alarms, and on request a custom domain and a dashboard.
    this.alarms = addAlarms(this, {
      deadLetterQueue: this.deadLetterQueue,
      api: this.api,
      functions: this.functions,
      others: this.outbox.alarms,
      ...(props.alarmTopic === undefined ? {} : { topic: props.alarmTopic }),
    });
    if (props.customDomain !== undefined)
      this.domainName = addCustomDomain(this, this.api, props.customDomain);
    if (props.dashboard !== undefined && props.dashboard !== false) {
      this.dashboard = addDashboard(
        this,
        {
          api: this.api,
          functions: this.functions,
          deadLetterQueue: this.deadLetterQueue,
          table: this.table,
        },
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

/** The function named `name` (one of `functions/routes.ts`). */
function handlerNamed(handlers: Readonly<Record<string, HandlerFunction>>, name: string): HandlerFunction {
  const handler = handlers[name];
  if (handler === undefined) throw new Error(`no function named ${name}`);
  return handler;
}
