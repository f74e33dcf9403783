/**
 * The normalized `AppState Change` event published for every accepted transition, and the publisher
 * interface it goes through. The Runner itself publishes nothing: events are produced from committed record
 * changes (the table's stream in AWS, the local outbox in local mode; see `lib/events`).
 *
 * @module
 */
import type { AppHandle, AppState, AttemptOutcome, StateReason, TransitionSource } from '../specs/index.js';

/** EventBridge `source` of the stack's normalized events. */
export const APP_STATE_CHANGE_SOURCE = 'torchx-serverless';
/** EventBridge `detail-type` of the stack's normalized events. */
export const APP_STATE_CHANGE_DETAIL_TYPE = 'AppState Change';

/** One accepted state change, as automation sees it (the event's `detail`). */
export interface AppStateChangeEvent {
  /**
   * Stable id of this change: `<handle>#<record version>`. Delivery is at least once; consumers drop an id
   * they have seen.
   */
  id: string;
  /** The record version the change produced (increases by one per accepted transition). */
  version: number;
  handle: AppHandle;
  scheduler: string;
  appId: string;
  owner: string;
  session: string;
  name: string;
  /** The state before; equal to `to` when only the reason changed (`stateReason` says what it is now). */
  from: AppState;
  to: AppState;
  reason?: string;
  /** The scheduler's reason for the state `to`, with its code and since-when (absent: none given). */
  stateReason?: StateReason;
  /** How each finished attempt ended (Batch), newest last; `infrastructure` marks a Spot reclaim or lost host. */
  attemptOutcomes?: AttemptOutcome[];
  /** ISO-8601 time of the change as the scheduler reported it. */
  time: string;
  source: TransitionSource;
}

/** Where accepted transitions are published. */
export interface AppStateChangePublisher {
  publish(event: AppStateChangeEvent): Promise<void>;
}
