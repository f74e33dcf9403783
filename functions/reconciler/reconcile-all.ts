/**
 * The reconciler's work, without its Lambda middleware: every non-terminal record refreshed from its
 * scheduler. The local server calls it on a timer, without the handler's Lambda middleware (log context,
 * metrics flush).
 */

import { runner } from '../schedulers/table.js';
import { logger, metrics } from '../shared/powertools.js';

/** Per scheduler: records checked, changed and failed. */
export type ReconcileReport = Record<string, { checked: number; changed: number; errors: number }>;

/** Refreshes every non-terminal record of every enabled scheduler; returns what it checked and changed. */
export async function reconcileAll(): Promise<ReconcileReport> {
  const report: ReconcileReport = {};
  const reconciler = await runner();
  for (const scheduler of reconciler.schedulerBackends()) {
    report[scheduler] = await reconciler.reconcile(scheduler);
    metrics.addMetric('ReconciledRecords', 'Count', report[scheduler].checked);
    metrics.addMetric('ReconcileChanges', 'Count', report[scheduler].changed);
  }
  logger.info('reconciled', { report });
  return report;
}
