/**
 * EventBridge → app records: Batch and SageMaker state-change events (and the local scheduler's, in local
 * mode) become transitions; events for jobs we did not launch are ignored. Throws only for our own failures
 * (e.g. DynamoDB unavailable) so EventBridge retries and, after that, the dead-letter queue keeps the event.
 */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import type { StateChangeEnvelope } from '../../lib/events/index.js';
import { logger, metrics } from '../shared/powertools.js';
import { handleStateChange, type StateChangeResult } from './apply-state-change.js';

export { handleStateChange, type StateChangeResult } from './apply-state-change.js';

export const handler = middy<StateChangeEnvelope, StateChangeResult>()
  .use(injectLambdaContext(logger, { resetKeys: true }))
  // Flushes the metrics after every invocation, failed ones included (a throw skips a manual flush).
  .use(logMetrics(metrics))
  .handler(handleStateChange);
