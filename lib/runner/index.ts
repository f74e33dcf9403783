/**
 * The Runner, its store interface, its errors and the normalized state-change event.
 *
 * @module
 */
export * from './errors.js';
export * from './events.js';
export * from './runner.js';
export * from './store.js';
