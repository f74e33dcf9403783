/**
 * Scheduled reconciler: refreshes every non-terminal app record from its scheduler, so a lost event cannot
 * leave an app RUNNING forever.
 */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import middy from '@middy/core';
import { runner } from '../shared/container.js';
import { logger, metrics } from '../shared/powertools.js';
import { tracer } from '../shared/tracing.js';

/** Per scheduler: records checked, changed and failed. */
export type ReconcileReport = Record<string, { checked: number; changed: number; errors: number }>;

export async function reconcileAll(): Promise<ReconcileReport> {
  const report: ReconcileReport = {};
  const reconciler = runner();
  for (const scheduler of reconciler.schedulerBackends()) {
    report[scheduler] = await reconciler.reconcile(scheduler);
    metrics.addMetric('ReconciledRecords', 'Count', report[scheduler].checked);
    metrics.addMetric('ReconcileChanges', 'Count', report[scheduler].changed);
  }
  logger.info('reconciled', { report });
  return report;
}

export const handler = middy<unknown, ReconcileReport>()
  .use(injectLambdaContext(logger, { resetKeys: true }))
  // Flushes the metrics after every invocation, failed ones included (a throw skips a manual flush).
  .use(logMetrics(metrics))
  .use(captureLambdaHandler(tracer))
  .handler(reconcileAll);
