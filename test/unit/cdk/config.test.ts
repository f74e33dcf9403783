import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { describe, expect, it } from 'vitest';
import { readDeployConfig } from '../../../cdk/config.js';
import { TorchxServerlessPropsError } from '../../../cdk/constructs/prop-issues.js';
import { validateProps } from '../../../cdk/constructs/validate-props.js';

const from = (context: Record<string, unknown>, env: Record<string, string> = {}) =>
  readDeployConfig((key) => context[key], env);

function issuesOf(run: () => unknown): { path: string; message: string }[] {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(TorchxServerlessPropsError);
    return [...(error as TorchxServerlessPropsError).issues];
  }
  throw new Error('expected TorchxServerlessPropsError');
}

describe('readDeployConfig', () => {
  it('defaults to stage dev and no other props', () => {
    expect(from({})).toEqual({
      stage: 'dev',
      stackName: 'TorchxServerless-dev',
      props: { stageName: 'dev' },
    });
  });

  it('takes the stage from context, else from TXS_STAGE', () => {
    expect(from({ stage: 'prod' }, { TXS_STAGE: 'ignored' }).stackName).toBe('TorchxServerless-prod');
    expect(from({}, { TXS_STAGE: 'qa' }).props.stageName).toBe('qa');
  });

  it('reads lists from -c key=a,b strings and from cdk.json arrays', () => {
    const viaCli = from({
      batchJobQueues: 'gpu, cpu',
      batchJobRoleArns: 'arn:aws:iam::123456789012:role/A,arn:aws:iam::123456789012:role/B',
      schedulers: 'aws_batch',
    });
    expect(viaCli.props.batchJobQueues).toEqual(['gpu', 'cpu']);
    expect(viaCli.props.batchJobRoleArns).toEqual([
      'arn:aws:iam::123456789012:role/A',
      'arn:aws:iam::123456789012:role/B',
    ]);
    expect(viaCli.props.schedulers).toEqual(['aws_batch']);
    expect(from({ sageMakerExecutionRoleArns: ['arn:aws:iam::123456789012:role/S'] }).props).toMatchObject({
      sageMakerExecutionRoleArns: ['arn:aws:iam::123456789012:role/S'],
    });
  });

  it('converts numbers, durations, retention and removal policy', () => {
    const { props } = from({
      throttlingRateLimit: '20',
      throttlingBurstLimit: 40,
      recordRetentionDays: '30',
      reconcileIntervalMinutes: '10',
      logRetentionDays: '90',
      tableRemovalPolicy: 'destroy',
      apiGatewayCloudWatchRole: 'false',
      memorySize: '1024',
    });
    expect(props.throttlingRateLimit).toBe(20);
    expect(props.throttlingBurstLimit).toBe(40);
    expect(props.recordRetentionDays).toBe(30);
    expect(props.reconcileInterval?.toMinutes()).toBe(Duration.minutes(10).toMinutes());
    expect(props.logRetention).toBe(RetentionDays.THREE_MONTHS);
    expect(props.tableRemovalPolicy).toBe(RemovalPolicy.DESTROY);
    expect(props.apiGatewayCloudWatchRole).toBe(false);
    expect(props.memorySize).toBe(1024);
  });

  it('names every bad context key and what it accepts', () => {
    const issues = issuesOf(() =>
      from({
        throttlingRateLimit: 'fast',
        tableRemovalPolicy: 'keep',
        logRetentionDays: '42',
        reconcileIntervalMinutes: '2.5',
        apiGatewayCloudWatchRole: 'yes',
        batchJobQueues: { gpu: true },
      }),
    );
    expect(issues.map((i) => i.path).sort()).toEqual(
      [
        'apiGatewayCloudWatchRole',
        'batchJobQueues',
        'logRetentionDays',
        'reconcileIntervalMinutes',
        'tableRemovalPolicy',
        'throttlingRateLimit',
      ].sort(),
    );
    expect(issues.find((i) => i.path === 'tableRemovalPolicy')?.message).toBe(
      "must be retain or destroy, got 'keep'",
    );
    expect(issues.find((i) => i.path === 'logRetentionDays')?.message).toMatch(
      /^must be one of 1, 3, 5, 7, 14, 30/,
    );
  });
});

describe('validateProps', () => {
  it('accepts the defaults and a full configuration', () => {
    expect(() => validateProps({})).not.toThrow();
    expect(() =>
      validateProps({
        batchJobQueues: ['gpu', 'arn:aws:batch:us-east-1:123456789012:job-queue/cpu'],
        batchJobRoleArns: ['arn:aws:iam::123456789012:role/path/TrainingJobRole'],
        sageMakerExecutionRoleArns: ['arn:aws-cn:iam::123456789012:role/SageMaker'],
        stageName: 'prod_1',
      }),
    ).not.toThrow();
  });

  it('rejects role ARNs, queues and numbers that would deploy a broken stack, naming each prop', () => {
    const issues = issuesOf(() =>
      validateProps({
        batchJobRoleArns: ['TrainingJobRole'],
        sageMakerExecutionRoleArns: ['arn:aws:iam::123456789012:user/alice'],
        batchJobQueues: ['gpu queue'],
        eventRetryAttempts: 200,
        throttlingRateLimit: 0,
        stageName: 'prod/1',
        schedulers: ['local_cwd' as never],
        tableRemovalPolicy: RemovalPolicy.SNAPSHOT,
      }),
    );
    expect(issues).toEqual([
      { path: 'batchJobQueues.0', message: "'gpu queue' is not a job queue name or ARN" },
      {
        path: 'batchJobRoleArns.0',
        message:
          "'TrainingJobRole' is not an IAM role ARN such as arn:aws:iam::123456789012:role/TrainingJobRole",
      },
      {
        path: 'sageMakerExecutionRoleArns.0',
        message:
          "'arn:aws:iam::123456789012:user/alice' is not an IAM role ARN such as arn:aws:iam::123456789012:role/TrainingJobRole",
      },
      {
        path: 'tableRemovalPolicy',
        message: 'DynamoDB tables and log groups support RETAIN or DESTROY, not snapshot',
      },
      { path: 'schedulers.0', message: "'local_cwd' is not one of 'aws_batch', 'aws_sagemaker', 'slurm'" },
      { path: 'throttlingRateLimit', message: 'must be a positive number, got 0' },
      { path: 'eventRetryAttempts', message: 'must be a whole number from 0 to 185, got 200' },
      {
        path: 'stageName',
        message: "'prod/1' may contain only letters, digits, '-' and '_' (1 to 128 characters)",
      },
    ]);
  });

  it('rejects empty lists instead of silently allowing everything', () => {
    expect(issuesOf(() => validateProps({ batchJobQueues: [], schedulers: [] })).map((i) => i.path)).toEqual([
      'batchJobQueues',
      'schedulers',
    ]);
  });
});
