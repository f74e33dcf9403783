/**
 * The control plane's functions: one {@link HandlerFunction} per route and per event source of
 * `functions/routes.ts`, each with the shared environment (the table, the bus, the schedulers and the
 * security settings), the placement, memory and concurrency the props give it, and exactly the access
 * `FUNCTION_ACCESS` lists for it.
 *
 * @module
 */
import { Duration, Stack, Validations } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { IEventBus } from 'aws-cdk-lib/aws-events';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';
import { EVENT_FUNCTIONS, FUNCTIONS, ROUTES } from '../../functions/routes.js';
import { batchNamePrefix, ENV } from '../../functions/shared/env-names.js';
import { type AccessTargets, FUNCTION_ACCESS, grantAccess } from './access.js';
import { functionCode } from './function-code.js';
import { HandlerFunction } from './handler-function.js';
import { applyReservedConcurrency, securityEnvironment, stackTagOf } from './security.js';
import {
  DEFAULT_JOB_LOG_GROUPS,
  type Settings,
  type TorchxServerlessProps,
} from './torchx-serverless-props.js';
import type { WorkspaceArchiveBucket } from './workspace-bucket.js';

/** What every function needs to know of the rest of the control plane. */
export interface FunctionTargets {
  readonly table: ITable;
  readonly eventBus: IEventBus;
  /** The workspace bucket, when the stack has one. */
  readonly workspaceBucket?: WorkspaceArchiveBucket;
}

/** API Gateway waits at most 29 s for an integration; the functions stop before it does. */
const API_TIMEOUT = Duration.seconds(28);

type EventFunctionName = (typeof EVENT_FUNCTIONS)[keyof typeof EVENT_FUNCTIONS]['name'];

/** Description and timeout of each event function (a route's are its method and path, and 28 s). */
const EVENT_FUNCTION_SETTINGS: Readonly<
  Record<EventFunctionName, { readonly description: string; readonly timeout: Duration }>
> = {
  [EVENT_FUNCTIONS.stateChange.name]: {
    description: 'Batch and SageMaker job state changes to app record transitions',
    timeout: Duration.seconds(60),
  },
  [EVENT_FUNCTIONS.reconciler.name]: {
    description: 'Refreshes non-terminal app records from the schedulers (lost events)',
    timeout: Duration.minutes(5),
  },
  [EVENT_FUNCTIONS.publisher.name]: {
    description: 'Publishes AppState Change events from the app table stream (the outbox)',
    timeout: Duration.seconds(60),
  },
};

/** Builds every function of `FUNCTIONS` in `scope` (ids: the function names), in that order. */
export function addFunctions(
  scope: Construct,
  props: TorchxServerlessProps,
  settings: Settings,
  targets: FunctionTargets,
): Record<string, HandlerFunction> {
  const stackName = Stack.of(scope).stackName;
  const environment = functionEnvironment(props, settings, targets, stackName);
  const access = accessTargets(props, settings, targets, stackName);
  const placement =
    props.vpc === undefined
      ? {}
      : {
          vpc: props.vpc,
          ...(props.vpcSubnets === undefined ? {} : { vpcSubnets: props.vpcSubnets }),
          ...(props.securityGroups === undefined ? {} : { securityGroups: props.securityGroups }),
        };
  const functions: Record<string, HandlerFunction> = {};
  for (const { name, entry } of FUNCTIONS) {
    const route = ROUTES.find((r) => r.name === name);
    const { description, timeout } =
      route === undefined
        ? EVENT_FUNCTION_SETTINGS[name as EventFunctionName]
        : { description: `${route.method} ${route.path}`, timeout: API_TIMEOUT };
    const memorySize = props.functionMemorySize?.[name] ?? props.memorySize;
    const provisionedConcurrency = props.provisionedConcurrency?.[name];
    const handler = new HandlerFunction(scope, name, {
      entry,
      ...functionCode(name, entry, props.projectRoot),
      description,
      environment,
      logRetention: settings.logRetention,
      logRemovalPolicy: settings.removalPolicy,
      timeout,
      ...placement,
      ...(memorySize === undefined ? {} : { memorySize }),
      ...(provisionedConcurrency === undefined ? {} : { provisionedConcurrency }),
    });
    grantAccess(handler.role, FUNCTION_ACCESS[name] ?? {}, access);
    applyReservedConcurrency(handler.function, name, route !== undefined, props.reservedConcurrency);
    // functions that call schedulers (they describe Batch jobs) read the Slurm key, on exactly its secret
    if (settings.slurm !== undefined && FUNCTION_ACCESS[name]?.batch !== undefined) {
      handler.role.addToPrincipalPolicy(
        new PolicyStatement({
          actions: ['secretsmanager:GetSecretValue'],
          resources: [settings.slurm.jwtKeySecretArn],
        }),
      );
    }
    acknowledgeFunctionFindings(handler);
    functions[name] = handler;
  }
  return functions;
}

/** The environment every function gets (the names are `functions/shared/env-names.ts`'s). */
function functionEnvironment(
  props: TorchxServerlessProps,
  settings: Settings,
  targets: FunctionTargets,
  stackName: string,
): Record<string, string> {
  const environment: Record<string, string> = {
    [ENV.tableName]: targets.table.tableName,
    [ENV.eventBusName]: targets.eventBus.eventBusName,
    [ENV.schedulers]: settings.schedulers.join(','),
    // No NODE_OPTIONS=--enable-source-maps: decoding the map at start-up costs every cold start (see
    // docs/performance.md); the bundles keep their .map files to decode stack traces offline.
  };
  if (props.batchJobQueues !== undefined) environment[ENV.batchQueues] = props.batchJobQueues.join(',');
  if (props.sessionName !== undefined) environment[ENV.sessionName] = props.sessionName;
  if (targets.workspaceBucket !== undefined && settings.workspaceDays !== undefined) {
    environment[ENV.workspaceBucket] = targets.workspaceBucket.bucketName;
    environment[ENV.workspaceDays] = String(settings.workspaceDays);
  }
  if (props.recordRetentionDays !== undefined)
    environment[ENV.retentionDays] = String(props.recordRetentionDays);
  // ---- security settings (cdk/constructs/security.ts, docs/security.md)
  Object.assign(environment, securityEnvironment(props, stackName));
  const { slurm } = settings;
  if (slurm !== undefined) {
    environment[ENV.slurmUrl] = slurm.restUrl;
    environment[ENV.slurmUser] = slurm.user;
    environment[ENV.slurmJwtKeySecretArn] = slurm.jwtKeySecretArn;
    if (slurm.workDir !== undefined) environment[ENV.slurmWorkDir] = slurm.workDir;
  }
  return environment;
}

/** What the functions' IAM policies are scoped to (./access.ts). */
function accessTargets(
  props: TorchxServerlessProps,
  settings: Settings,
  targets: FunctionTargets,
  stackName: string,
): AccessTargets {
  const { schedulers } = settings;
  return {
    table: targets.table,
    eventBus: targets.eventBus,
    ...(schedulers.includes('aws_batch')
      ? {
          batch: {
            jobQueueArns: settings.batchQueueArns ?? [],
            jobRoleArns: props.batchJobRoleArns ?? [],
            namePrefix: batchNamePrefix(stackName),
          },
        }
      : {}),
    ...(schedulers.includes('aws_sagemaker')
      ? { sageMaker: { executionRoleArns: props.sageMakerExecutionRoleArns ?? [] } }
      : {}),
    logGroupNames: props.jobLogGroupNames ?? DEFAULT_JOB_LOG_GROUPS,
    ...(targets.workspaceBucket === undefined ? {} : { workspaceBucket: targets.workspaceBucket }),
    stackTag: stackTagOf(stackName),
    privilegedAllowed: props.hostAccess?.privileged === true,
    ...(props.sageMakerInstanceTypes === undefined
      ? {}
      : { sageMakerInstanceTypes: props.sageMakerInstanceTypes }),
  };
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
