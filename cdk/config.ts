/**
 * Deploy-time configuration from CDK context (`npx cdk deploy -c stage=prod -c batchJobQueues=gpu,cpu`, or the
 * `context` block of cdk.json): parsed, checked and turned into stack props.
 *
 * @module
 */
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { type PropIssue, TorchxServerlessPropsError } from './constructs/prop-issues.js';
import type { TorchxServerlessStackProps } from './stack.js';

/** The context keys the app reads, with what each one sets. */
export const CONTEXT_KEYS = {
  stage:
    'Stage name: the API stage and the stack name `TorchxServerless-<stage>` (default dev; env TXS_STAGE)',
  batchJobQueues: 'Batch job queues (names or ARNs), comma-separated',
  batchJobRoleArns: 'IAM roles Batch job definitions may name (job and execution roles), comma-separated',
  sageMakerExecutionRoleArns: 'IAM roles SageMaker training jobs may run as, comma-separated',
  jobLogGroupNames: 'Log groups the logs route may read, comma-separated',
  schedulers: 'aws_batch, aws_sagemaker and/or slurm, comma-separated',
  tableRemovalPolicy: 'retain (default) or destroy',
  recordRetentionDays: 'Days to keep finished app records',
  sessionName: 'Default session of new app handles',
  throttlingRateLimit: 'API requests per second',
  throttlingBurstLimit: 'API request burst',
  reconcileIntervalMinutes: 'Minutes between reconciler runs',
  logRetentionDays: 'Days to keep function and API logs (a CloudWatch Logs retention value)',
  memorySize: 'Memory of each function in MB',
  eventBusName: 'Name of the bus for normalized events',
  alarmTopicArn: 'SNS topic every alarm notifies',
  webAclArn: 'WAFv2 web ACL to associate with the API stage',
  apiGatewayCloudWatchRole: "true to create (replace) the account's API Gateway logging role (default false)",
  // ---- security (docs/security.md)
  adminPrincipals: 'Role or user ARNs that may list, read, cancel and delete every app, comma-separated',
  perSessionOwnerRoles:
    'Role names (trailing * = prefix) whose sessions are separate owners, e.g. AWSReservedSSO_*',
  allowPrivileged: 'true to allow privileged Batch containers (default false)',
  hostPathPrefixes: 'Host path prefixes bind mounts may name, comma-separated, or * (default none)',
  devices: 'Host devices device mounts may name, comma-separated, or * (default none)',
  sageMakerInstanceTypes: 'SageMaker instance types runs may use, comma-separated (default any)',
  reservedConcurrency:
    'Reserved concurrency of each API function (default none; needs an account quota above 100)',
  apiLogging: 'true for API access and execution logs (needs the account API Gateway logging role)',
} as const;

/** Stage name and stack props from context. */
export interface DeployConfig {
  readonly stage: string;
  readonly stackName: string;
  readonly props: TorchxServerlessStackProps;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

const REMOVAL_POLICIES: Readonly<Record<string, RemovalPolicy>> = {
  retain: RemovalPolicy.RETAIN,
  destroy: RemovalPolicy.DESTROY,
};

/**
 * Reads the deploy configuration.
 *
 * @param context reads one context value (`app.node.tryGetContext`).
 * @param env the process environment (only `TXS_STAGE` is read).
 * @throws TorchxServerlessPropsError naming each bad context key and what it accepts.
 * @example
 * ```ts
 * const config = readDeployConfig((key) => app.node.tryGetContext(key), process.env);
 * new TorchxServerlessStack(app, config.stackName, config.props);
 * ```
 */
export function readDeployConfig(
  context: (key: string) => unknown,
  env: Readonly<Record<string, string | undefined>> = {},
): DeployConfig {
  const issues: PropIssue[] = [];
  const text = (key: keyof typeof CONTEXT_KEYS): string | undefined => {
    const value = context(key);
    if (value === undefined || value === null || value === '') return undefined;
    if (typeof value === 'string') return value.trim();
    if (typeof value === 'number' || typeof value === 'boolean') return String(value);
    issues.push({ path: key, message: `must be a string, got ${JSON.stringify(value)}` });
    return undefined;
  };
  const list = (key: keyof typeof CONTEXT_KEYS): string[] | undefined => {
    const value = context(key);
    if (value === undefined || value === null || value === '') return undefined;
    const items = Array.isArray(value) ? value : typeof value === 'string' ? value.split(',') : undefined;
    if (items === undefined || !items.every((item) => typeof item === 'string')) {
      issues.push({ path: key, message: 'must be a comma-separated string or a list of strings' });
      return undefined;
    }
    const trimmed = items.map((item) => item.trim()).filter((item) => item !== '');
    return trimmed.length > 0 ? trimmed : undefined;
  };
  const number = (key: keyof typeof CONTEXT_KEYS): number | undefined => {
    const raw = text(key);
    if (raw === undefined) return undefined;
    const value = Number(raw);
    if (!Number.isFinite(value) || value <= 0) {
      issues.push({ path: key, message: `must be a positive number, got '${raw}'` });
      return undefined;
    }
    return value;
  };

  const flag = (key: keyof typeof CONTEXT_KEYS): boolean | undefined => {
    const raw = text(key);
    if (raw === undefined) return undefined;
    if (raw === 'true' || raw === 'false') return raw === 'true';
    issues.push({ path: key, message: `must be true or false, got '${raw}'` });
    return undefined;
  };

  const stage = text('stage') ?? env.TXS_STAGE ?? 'dev';
  const props: Mutable<TorchxServerlessStackProps> = { stageName: stage };
  const set = <K extends keyof TorchxServerlessStackProps>(name: K, value: TorchxServerlessStackProps[K]) => {
    if (value !== undefined) props[name] = value;
  };
  set('batchJobQueues', list('batchJobQueues'));
  set('batchJobRoleArns', list('batchJobRoleArns'));
  set('sageMakerExecutionRoleArns', list('sageMakerExecutionRoleArns'));
  set('jobLogGroupNames', list('jobLogGroupNames'));
  set('schedulers', list('schedulers') as TorchxServerlessStackProps['schedulers']);
  set('recordRetentionDays', number('recordRetentionDays'));
  set('sessionName', text('sessionName'));
  set('throttlingRateLimit', number('throttlingRateLimit'));
  set('throttlingBurstLimit', number('throttlingBurstLimit'));
  set('memorySize', number('memorySize'));
  set('eventBusName', text('eventBusName'));
  set('alarmTopicArn', text('alarmTopicArn'));
  set('webAclArn', text('webAclArn'));

  const removal = text('tableRemovalPolicy');
  if (removal !== undefined) {
    const policy = REMOVAL_POLICIES[removal.toLowerCase()];
    if (policy === undefined)
      issues.push({
        path: 'tableRemovalPolicy',
        message: `must be retain or destroy, got '${removal}'`,
      });
    else set('tableRemovalPolicy', policy);
  }
  const minutes = number('reconcileIntervalMinutes');
  if (minutes !== undefined) {
    if (Number.isInteger(minutes)) set('reconcileInterval', Duration.minutes(minutes));
    else issues.push({ path: 'reconcileIntervalMinutes', message: `must be a whole number, got ${minutes}` });
  }
  const days = number('logRetentionDays');
  if (days !== undefined) {
    const allowed = Object.values(RetentionDays).filter(
      (v): v is RetentionDays => typeof v === 'number' && v > 0,
    );
    if (allowed.includes(days as RetentionDays)) set('logRetention', days as RetentionDays);
    else
      issues.push({ path: 'logRetentionDays', message: `must be one of ${allowed.join(', ')}, got ${days}` });
  }
  set('apiGatewayCloudWatchRole', flag('apiGatewayCloudWatchRole'));
  set('adminPrincipals', list('adminPrincipals'));
  set('perSessionOwnerRoles', list('perSessionOwnerRoles'));
  set('sageMakerInstanceTypes', list('sageMakerInstanceTypes'));
  set('reservedConcurrency', number('reservedConcurrency'));
  const privileged = flag('allowPrivileged');
  const hostPathPrefixes = list('hostPathPrefixes');
  const devices = list('devices');
  if (privileged !== undefined || hostPathPrefixes !== undefined || devices !== undefined) {
    set('hostAccess', {
      ...(privileged === undefined ? {} : { privileged }),
      ...(hostPathPrefixes === undefined ? {} : { hostPathPrefixes }),
      ...(devices === undefined ? {} : { devices }),
    });
  }
  set('apiLogging', flag('apiLogging'));
  if (issues.length > 0) throw new TorchxServerlessPropsError(issues);
  return { stage, stackName: `TorchxServerless-${stage}`, props };
}
