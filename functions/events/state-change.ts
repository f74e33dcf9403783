/**
 * EventBridge → app records: Batch and SageMaker state-change events (and the local scheduler's, in local
 * mode) become transitions; events for jobs we did not launch are ignored. Throws only for our own failures
 * (e.g. DynamoDB unavailable) so EventBridge retries and, after that, the dead-letter queue keeps the event.
 */
import type { StateChangeEnvelope } from '../../lib/events/index.js';
import { eventHandler } from '../shared/event-handler.js';
import { handleStateChange, type StateChangeResult } from './apply-state-change.js';

export { handleStateChange, type StateChangeResult } from './apply-state-change.js';

export const handler = eventHandler<StateChangeEnvelope, StateChangeResult>(handleStateChange);
