/**
 * The synth-time checks of {@link TorchxServerlessProps}: every problem is found before anything is built and
 * thrown together, each naming the prop and the fix (the security props are checked in ./security.ts).
 *
 * @module
 */
import { RemovalPolicy, Token } from 'aws-cdk-lib';
import { EVENT_FUNCTIONS, FUNCTIONS, ROUTES } from '../../functions/routes.js';
import { type PropIssue, TorchxServerlessPropsError } from './prop-issues.js';
import { checkEach, securityIssues } from './security.js';
import type { TorchxServerlessProps } from './torchx-serverless-props.js';

const ROLE_ARN = /^arn:aws[a-z-]*:iam::\d{12}:role\/[\w+=,.@/-]{1,512}$/;
const QUEUE_NAME = /^[A-Za-z0-9_-]{1,128}$/;
const QUEUE_ARN = /^arn:aws[a-z-]*:batch:[a-z0-9-]+:\d{12}:job-queue\/[A-Za-z0-9_-]{1,128}$/;
const STAGE_NAME = /^[A-Za-z0-9_-]{1,128}$/;
const REMOVAL_POLICIES: ReadonlySet<RemovalPolicy> = new Set([RemovalPolicy.RETAIN, RemovalPolicy.DESTROY]);

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
  const workspaceExpiration = props.workspaceExpiration;
  if (
    workspaceExpiration !== undefined &&
    !Token.isUnresolved(workspaceExpiration.toSeconds()) &&
    !(Number.isInteger(workspaceExpiration.toDays({ integral: false })) && workspaceExpiration.toDays() >= 2)
  )
    issues.push({
      path: 'workspaceExpiration',
      message: `must be whole days, at least 2 (S3 lifecycle rules count days), not ${workspaceExpiration.toHumanString()}`,
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
