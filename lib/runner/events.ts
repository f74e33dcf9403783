/**
 * The normalized `AppState Change` event the runner publishes for every accepted transition, and the
 * publisher interface it publishes through (EventBridge in the stack, an in-process bus locally).
 *
 * @module
 */
import type { AppHandle, AppState, TransitionSource } from '../specs/index.js';

/** EventBridge `source` of the stack's normalized events. */
export const APP_STATE_CHANGE_SOURCE = 'torchx-serverless';
/** EventBridge `detail-type` of the stack's normalized events. */
export const APP_STATE_CHANGE_DETAIL_TYPE = 'AppState Change';

/** One accepted state change, as automation sees it. */
export interface AppStateChangeEvent {
  handle: AppHandle;
  scheduler: string;
  appId: string;
  owner: string;
  session: string;
  name: string;
  from: AppState;
  to: AppState;
  reason?: string;
  /** ISO-8601 time of the change as the scheduler reported it. */
  time: string;
  source: TransitionSource;
}

/** Where accepted transitions are published. */
export interface AppStateChangePublisher {
  publish(event: AppStateChangeEvent): Promise<void>;
}

/** A publisher that drops events (when no bus is configured). */
export const NO_PUBLISHER: AppStateChangePublisher = { publish: async () => {} };
