/**
 * Scheduled reconciler: refreshes every non-terminal app record from its scheduler, so a lost event cannot
 * leave an app RUNNING forever.
 */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import { logger, metrics } from '../shared/powertools.js';
import { type ReconcileReport, reconcileAll } from './reconcile-all.js';

export { type ReconcileReport, reconcileAll } from './reconcile-all.js';

export const handler = middy<unknown, ReconcileReport>()
  .use(injectLambdaContext(logger, { resetKeys: true }))
  // Flushes the metrics after every invocation, failed ones included (a throw skips a manual flush).
  .use(logMetrics(metrics))
  .handler(reconcileAll);
