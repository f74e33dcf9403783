/**
 * Scheduled reconciler: refreshes every non-terminal app record from its scheduler, so a lost event cannot
 * leave an app RUNNING forever.
 */
import { eventHandler } from '../shared/event-handler.js';
import { type ReconcileReport, reconcileAll } from './reconcile-all.js';

export { type ReconcileReport, reconcileAll } from './reconcile-all.js';

export const handler = eventHandler<unknown, ReconcileReport>(reconcileAll);
