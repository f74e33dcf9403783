/**
 * The state-change function's work, without its Lambda middleware: a Batch, SageMaker or local state-change
 * event becomes a transition of the app's record. The local server calls it directly, without the handler's
 * Lambda middleware (log context, metrics flush).
 */
import { mapStateChangeEvent, type StateChangeEnvelope } from '../../lib/events/index.js';
import { appRecords } from '../shared/container.js';
import { logger, metrics } from '../shared/powertools.js';

/** What one invocation did (returned for tests and logs). */
export type StateChangeResult = { applied: boolean; reason: string };

/** Applies one state-change event to its app record; events for apps we did not launch are ignored. */
export async function handleStateChange(event: StateChangeEnvelope): Promise<StateChangeResult> {
  const routed = mapStateChangeEvent(event);
  if ('ignored' in routed) {
    logger.debug('event ignored', { reason: routed.ignored });
    return { applied: false, reason: routed.ignored };
  }
  const outcome = await appRecords().applyNativeTransition(
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
  if (routed.queueBlocked !== undefined) {
    const { inQueue, stateReason } = routed.queueBlocked;
    const waiting = await appRecords().applyWaitingReason(routed.scheduler, inQueue, stateReason);
    if (waiting > 0) metrics.addMetric('WaitingReasonsApplied', 'Count', waiting);
  }
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
