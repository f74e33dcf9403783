/**
 * The Docker scheduler (`local_docker`): run options, the pure container translation, the state table and
 * the scheduler.
 *
 * @module
 */

export * from './engine.js';
export * from './options.js';
export * from './scheduler.js';
export * from './state.js';
export * from './translate.js';
