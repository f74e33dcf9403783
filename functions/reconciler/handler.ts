/**
 * Scheduled reconciler: refreshes every non-terminal app record from its scheduler, so a lost event cannot
 * leave an app RUNNING forever.
 */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import { runner } from '../shared/container.js';
import { logger, metrics } from '../shared/powertools.js';

/** Per scheduler: records checked, changed and failed. */
export type ReconcileReport = Record<string, { checked: number; changed: number; errors: number }>;

export async function reconcileAll(): Promise<ReconcileReport> {
  const report: ReconcileReport = {};
  for (const scheduler of runner().schedulerBackends()) {
    report[scheduler] = await runner().reconcile(scheduler);
    metrics.addMetric('ReconciledRecords', 'Count', report[scheduler].checked);
    metrics.addMetric('ReconcileChanges', 'Count', report[scheduler].changed);
  }
  logger.info('reconciled', { report });
  return report;
}

export const handler = middy<unknown, ReconcileReport>()
  .use(injectLambdaContext(logger, { resetKeys: true }))
  .handler(async () => {
    const report = await reconcileAll();
    metrics.publishStoredMetrics();
    return report;
  });
