/**
 * The deployable stack: one {@link TorchxServerless} construct and the outputs a caller needs (API URL, table,
 * bus, dead-letter queue).
 *
 * @module
 */
import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import { Topic } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import { TorchxServerless } from './constructs/torchx-serverless.js';
import type { TorchxServerlessProps } from './constructs/torchx-serverless-props.js';

/** Props of {@link TorchxServerlessStack}: the construct's props, plus an alarm topic by ARN. */
export interface TorchxServerlessStackProps extends StackProps, Omit<TorchxServerlessProps, 'alarmTopic'> {
  /** SNS topic ARN every alarm notifies. @default - alarms only change state */
  readonly alarmTopicArn?: string;
}

/**
 * The torchx-serverless control plane as a stack.
 *
 * @example
 * ```ts
 * new TorchxServerlessStack(app, 'TorchxServerless-prod', { stageName: 'prod', batchJobQueues: ['gpu'] });
 * ```
 */
export class TorchxServerlessStack extends Stack {
  /** The control plane. */
  readonly txs: TorchxServerless;

  constructor(scope: Construct, id: string, props: TorchxServerlessStackProps = {}) {
    super(scope, id, props);
    const { alarmTopicArn, ...constructProps } = props;
    this.txs = new TorchxServerless(this, 'Txs', {
      ...constructProps,
      ...(alarmTopicArn === undefined
        ? {}
        : { alarmTopic: Topic.fromTopicArn(this, 'AlarmTopic', alarmTopicArn) }),
    });

    new CfnOutput(this, 'ApiUrl', {
      description: 'Base URL of the API (txs --endpoint); requests are SigV4-signed for execute-api',
      value: this.txs.api.url,
    });
    new CfnOutput(this, 'TableName', {
      description: 'DynamoDB table of app records',
      value: this.txs.table.tableName,
    });
    new CfnOutput(this, 'EventBusName', {
      description: 'EventBridge bus of normalized "AppState Change" events',
      value: this.txs.eventBus.eventBusName,
    });
    new CfnOutput(this, 'EventBusArn', { value: this.txs.eventBus.eventBusArn });
    new CfnOutput(this, 'DeadLetterQueueUrl', {
      description: 'State-change events that could not be delivered or processed',
      value: this.txs.deadLetterQueue.queueUrl,
    });
    if (this.txs.workspaceBucket !== undefined) {
      new CfnOutput(this, 'WorkspaceBucketName', {
        description: 'S3 bucket of workspace archives (txs run --workspace); job roles read workspaces/*',
        value: this.txs.workspaceBucket.bucketName,
      });
    }
    new CfnOutput(this, 'OutboxDeadLetterQueueUrl', {
      description: 'AppState Change events the outbox could not publish (stream failure records)',
      value: this.txs.outbox.deadLetterQueue.queueUrl,
    });
  }
}
