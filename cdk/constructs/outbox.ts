/**
 * The transactional outbox in AWS: the app table's stream (NEW_AND_OLD_IMAGES) feeds the publisher
 * function, which puts one `AppState Change` event per committed state change on the bus. The stream is
 * read in order per shard, with `ReportBatchItemFailures` (Lambda retries from the first failed record),
 * bisection on error, a bounded retry count and record age, and an SQS on-failure destination holding what
 * still failed, with alarms on that queue and on the stream falling behind.
 *
 * A Lambda function rather than an EventBridge Pipe: the event needs the old and new image compared (a
 * state change, not every write), its id computed from the record version, and PutEvents' per-entry
 * failures retried; the same TypeScript runs in local mode and in the tests.
 *
 * @module
 */
import { Duration } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Construct } from 'constructs';
import { queueNotEmptyAlarm } from './alarms.js';
import { DeadLetterQueue } from './dead-letter-queue.js';

/** Props of {@link Outbox}. */
export interface OutboxProps {
  /** The app table; it must have a stream with NEW_AND_OLD_IMAGES. */
  readonly table: ITable;
  /** The publisher function (functions/events/publisher.ts), with events:PutEvents on the bus. */
  readonly publisher: IFunction;
  /**
   * Times the stream retries a failing batch (after bisecting it) before its records go to the queue.
   * @default 10
   */
  readonly retryAttempts?: number;
  /** Age after which an unpublished change goes to the queue (the stream keeps records 24 h). @default 6 hours */
  readonly maxRecordAge?: Duration;
}

/** The stream → publisher wiring, its dead-letter queue and alarms. */
export class Outbox extends Construct {
  /** Where the stream's on-failure records go (shard and sequence range of the changes not published). */
  readonly deadLetterQueue: DeadLetterQueue;
  /** Alarms: changes not published, and the stream falling behind. */
  readonly alarms: readonly Alarm[];

  constructor(scope: Construct, id: string, props: OutboxProps) {
    super(scope, id);
    this.deadLetterQueue = new DeadLetterQueue(this, 'UnpublishedChanges', {
      role: 'This queue is itself the on-failure destination of the outbox stream; it is alarmed on and read by operators.',
    });
    props.publisher.addEventSource(
      new DynamoEventSource(props.table, {
        startingPosition: StartingPosition.TRIM_HORIZON,
        batchSize: 100,
        maxBatchingWindow: Duration.seconds(1),
        // One batch per shard at a time: the events of one app leave in the order they were committed.
        parallelizationFactor: 1,
        reportBatchItemFailures: true,
        bisectBatchOnError: true,
        retryAttempts: props.retryAttempts ?? 10,
        maxRecordAge: props.maxRecordAge ?? Duration.hours(6),
        onFailure: new SqsDlq(this.deadLetterQueue),
      }),
    );
    this.alarms = [
      queueNotEmptyAlarm(
        this,
        'UnpublishedChangesAlarm',
        this.deadLetterQueue,
        'AppState Change events could not be published: the queue names the stream records; the app records hold the states',
      ),
      new Alarm(this, 'PublisherBehindAlarm', {
        alarmDescription: 'The outbox publisher is more than 5 minutes behind the app table stream',
        metric: props.publisher.metric('IteratorAge', { period: Duration.minutes(5), statistic: 'Maximum' }),
        threshold: Duration.minutes(5).toMilliseconds(),
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    ];
  }
}
