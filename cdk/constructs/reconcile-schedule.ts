/**
 * The reconciler's schedule: a rule that runs the reconciler function at a fixed rate, without retries (a
 * missed run is covered by the next one), so that records whose events were lost still reach their state.
 *
 * @module
 */
import { Duration } from 'aws-cdk-lib';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';

/** Props of {@link ReconcileSchedule}. */
export interface ReconcileScheduleProps {
  /** What the rule invokes: the reconciler function, or its `live` alias. */
  readonly reconciler: IFunction;
  /** How often it runs. */
  readonly interval: Duration;
}

/** The rule that runs the reconciler. */
export class ReconcileSchedule extends Rule {
  constructor(scope: Construct, id: string, props: ReconcileScheduleProps) {
    super(scope, id, {
      description: 'Runs the torchx-serverless reconciler',
      schedule: Schedule.rate(props.interval),
    });
    // A missed run is covered by the next one: no retries.
    props.reconciler.configureAsyncInvoke({ retryAttempts: 0, maxEventAge: Duration.minutes(1) });
    this.addTarget(new LambdaFunction(props.reconciler, { retryAttempts: 0 }));
  }
}
