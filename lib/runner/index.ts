/**
 * The Runner (the Planner's dry runs plus the app records and the scheduler calls), its store interface, its
 * errors and the normalized state-change event.
 *
 * @module
 */
export * from './app-records.js';
export * from './errors.js';
export * from './events.js';
export * from './idempotency.js';
export * from './planner.js';
export * from './revision.js';
export * from './runner.js';
export * from './store.js';
