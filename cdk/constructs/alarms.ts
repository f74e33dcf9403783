/**
 * The control plane's alarms: dead letters of state-change events, API 5xx answers, the outbox's, and each
 * function's errors (uncaught errors, timeouts, out of memory), all notifying one optional SNS topic.
 *
 * @module
 */
import { Duration } from 'aws-cdk-lib';
import type { RestApi } from 'aws-cdk-lib/aws-apigateway';
import { Alarm, ComparisonOperator, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { Function as LambdaFn } from 'aws-cdk-lib/aws-lambda';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';

/** What {@link addAlarms} watches. */
export interface AlarmTargets {
  /** The state-change dead-letter queue. */
  readonly deadLetterQueue: IQueue;
  readonly api: RestApi;
  /** Every function, by name. */
  readonly functions: Readonly<Record<string, LambdaFn>>;
  /** Alarms built elsewhere (the outbox's) that notify the same topic. */
  readonly others: readonly Alarm[];
  /** The topic every alarm notifies. @default - alarms only change state */
  readonly topic?: ITopic;
}

/** An alarm that fires on the first data point of `metric` at 1 or more (no data is fine). */
export function atLeastOnceAlarm(
  scope: Construct,
  id: string,
  description: string,
  metric: Alarm['metric'],
): Alarm {
  return new Alarm(scope, id, {
    alarmDescription: description,
    metric,
    threshold: 1,
    comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    evaluationPeriods: 1,
    treatMissingData: TreatMissingData.NOT_BREACHING,
  });
}

/** An alarm that fires as soon as `queue` holds a message (dead letters: each one needs a look). */
export function queueNotEmptyAlarm(scope: Construct, id: string, queue: IQueue, description: string): Alarm {
  const visible = queue.metricApproximateNumberOfMessagesVisible({
    period: Duration.minutes(5),
    statistic: 'Maximum',
  });
  return atLeastOnceAlarm(scope, id, description, visible);
}

/** Adds the alarms to `scope` and returns them with `others`, each notifying `topic`. */
export function addAlarms(scope: Construct, targets: AlarmTargets): Alarm[] {
  const fiveMinuteSum = { period: Duration.minutes(5), statistic: 'Sum' };
  const alarms: Alarm[] = [
    queueNotEmptyAlarm(
      scope,
      'DeadLettersAlarm',
      targets.deadLetterQueue,
      'State-change events could not be delivered or processed: read them from the dead-letter queue',
    ),
    atLeastOnceAlarm(
      scope,
      'ApiServerErrorsAlarm',
      'The API answered 5xx: see the function logs (errors carry the request id)',
      targets.api.metricServerError(fiveMinuteSum),
    ),
    ...targets.others,
  ];
  for (const [name, fn] of Object.entries(targets.functions)) {
    alarms.push(
      atLeastOnceAlarm(
        scope,
        `${name}ErrorsAlarm`,
        `The ${name} function failed (uncaught error, timeout or out of memory)`,
        fn.metricErrors(fiveMinuteSum),
      ),
    );
  }
  if (targets.topic !== undefined) {
    const action = new SnsAction(targets.topic);
    for (const alarm of alarms) alarm.addAlarmAction(action);
  }
  return alarms;
}
