/**
 * EventBridge → app records: Batch and SageMaker state-change events (and the local scheduler's, in local
 * mode) become transitions; events for jobs we did not launch are ignored. Throws only for our own failures
 * (e.g. DynamoDB unavailable) so EventBridge retries and, after that, the dead-letter queue keeps the event.
 */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import middy from '@middy/core';
import { mapStateChangeEvent, type StateChangeEnvelope } from '../../lib/events/index.js';
import { recordsRunner } from '../shared/container.js';
import { logger, metrics } from '../shared/powertools.js';
import { tracer } from '../shared/tracing.js';

/** What one invocation did (returned for tests and logs). */
export type StateChangeResult = { applied: boolean; reason: string };

export async function handleStateChange(event: StateChangeEnvelope): Promise<StateChangeResult> {
  const routed = mapStateChangeEvent(event);
  if ('ignored' in routed) {
    logger.debug('event ignored', { reason: routed.ignored });
    return { applied: false, reason: routed.ignored };
  }
  const outcome = await recordsRunner().applyNativeTransition(
    routed.scheduler,
    routed.nativeName,
    routed.transition,
    {
      // The name index is eventually consistent: count lookups that missed, and events given up as foreign.
      onIndexMiss: (_lookup, last) =>
        metrics.addMetric(last ? 'EventsForeign' : 'EventsLateIndexRetried', 'Count', 1),
      // Batch and SageMaker events name the app id: the record is read by key, not through the index.
      ...(routed.appId !== undefined ? { appId: routed.appId } : {}),
    },
  );
  if (outcome === undefined) return { applied: false, reason: 'not an app we launched' };
  if (!outcome.applied) return { applied: false, reason: outcome.reason };
  metrics.addMetric('TransitionsApplied', 'Count', 1);
  logger.info('transition applied', {
    handle: outcome.record.handle,
    from: outcome.previous,
    to: outcome.record.state,
  });
  return { applied: true, reason: `${outcome.previous} -> ${outcome.record.state}` };
}

export const handler = middy<StateChangeEnvelope, StateChangeResult>()
  .use(injectLambdaContext(logger, { resetKeys: true }))
  // Flushes the metrics after every invocation, failed ones included (a throw skips a manual flush).
  .use(logMetrics(metrics))
  .use(captureLambdaHandler(tracer))
  .handler(handleStateChange);
