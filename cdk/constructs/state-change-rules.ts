/**
 * Scheduler events in: the EventBridge rules that send AWS Batch and SageMaker job state changes (and Batch
 * "queue blocked" events) to the state-change function, with EventBridge's retries and the dead-letter
 * queue, and the function's own asynchronous retries into the same queue.
 *
 * @module
 */
import { Duration } from 'aws-cdk-lib';
import { Rule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';

/** What {@link addStateChangeRules} connects. */
export interface StateChangeRulesProps {
  /** What the rules invoke: the state-change function, or its `live` alias. */
  readonly stateChange: IFunction;
  /** Where events go when delivery or processing keeps failing. */
  readonly deadLetterQueue: IQueue;
  /** Route AWS Batch events (the aws_batch scheduler is deployed). */
  readonly batch: boolean;
  /** The job queues whose events are routed. @default - every queue's */
  readonly batchQueueArns?: readonly string[];
  /** Times EventBridge retries a delivery. */
  readonly retryAttempts: number;
  /** Age after which an undelivered event goes to the dead-letter queue. */
  readonly maxEventAge: Duration;
}

/** Adds the rules to `scope` (ids `BatchJobStateChange`, `BatchJobQueueBlocked`, `SageMakerTrainingJobStateChange`). */
export function addStateChangeRules(scope: Construct, props: StateChangeRulesProps): void {
  // EventBridge invokes Lambda asynchronously: Lambda retries a failed invocation twice, then sends the
  // invocation record to the dead-letter queue (the rule's DLQ only covers delivery failures).
  props.stateChange.configureAsyncInvoke({
    retryAttempts: 2,
    maxEventAge: Duration.hours(6),
    onFailure: new SqsDestination(props.deadLetterQueue),
  });
  const target = () =>
    new LambdaFunction(props.stateChange, {
      deadLetterQueue: props.deadLetterQueue,
      retryAttempts: props.retryAttempts,
      maxEventAge: props.maxEventAge,
    });
  // `detail.jobQueue` is always the queue ARN: match only the queues jobs may be submitted to.
  const queues =
    props.batchQueueArns === undefined ? {} : { detail: { jobQueue: [...props.batchQueueArns] } };
  if (props.batch) {
    new Rule(scope, 'BatchJobStateChange', {
      description: 'AWS Batch job state changes to the torchx-serverless state-change function',
      eventPattern: { source: ['aws.batch'], detailType: ['Batch Job State Change'], ...queues },
      targets: [target()],
    });
    // The job at the head of a queue cannot start (no capacity, a misconfiguration): its statusReason is
    // the reason every app waiting in that queue waits.
    new Rule(scope, 'BatchJobQueueBlocked', {
      description: 'AWS Batch job queue blocked events to the torchx-serverless state-change function',
      eventPattern: { source: ['aws.batch'], detailType: ['Batch Job Queue Blocked'], ...queues },
      targets: [target()],
    });
  }
  new Rule(scope, 'SageMakerTrainingJobStateChange', {
    description: 'SageMaker training job state changes to the torchx-serverless state-change function',
    eventPattern: { source: ['aws.sagemaker'], detailType: ['SageMaker Training Job State Change'] },
    targets: [target()],
  });
}
