/**
 * The LSF scheduler (`lsf`): run options, the pure bsub-script translation, the state table and the
 * scheduler (dry runs only).
 *
 * @module
 */
export * from './options.js';
export * from './scheduler.js';
export * from './state.js';
export * from './translate.js';
