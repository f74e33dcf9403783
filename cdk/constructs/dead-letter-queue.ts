/**
 * A dead-letter queue of the control plane (undelivered state-change events, unpublished outbox changes):
 * SQS-managed encryption, TLS only, messages kept the SQS maximum of 14 days (./alarms.ts alarms as soon as
 * one holds a message).
 *
 * @module
 */
import { Duration, Validations } from 'aws-cdk-lib';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';

/** Props of {@link DeadLetterQueue}. */
export interface DeadLetterQueueProps {
  /** Whose dead letters the queue holds, and who reads them: why it has no dead-letter queue of its own. */
  readonly role: string;
}

/** A dead-letter queue; cdk-nag's "queue without a DLQ" finding is acknowledged with its role. */
export class DeadLetterQueue extends Queue {
  constructor(scope: Construct, id: string, props: DeadLetterQueueProps) {
    super(scope, id, {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    Validations.of(this).acknowledge({ id: 'AwsSolutions-SQS3', reason: props.role });
  }
}
