/**
 * The Kubernetes MCAD scheduler (`kubernetes_mcad`): run options, the pure AppWrapper translation, the state
 * tables and the scheduler.
 *
 * @module
 */
export * from './options.js';
export * from './scheduler.js';
export * from './state.js';
export * from './translate.js';
