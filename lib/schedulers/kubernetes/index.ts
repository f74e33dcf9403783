/**
 * The Kubernetes (Volcano) scheduler (`kubernetes`): run options, the pure Volcano Job translation, the pod
 * parts shared with `kubernetes_mcad`, the state tables and the (dry-run-only) scheduler.
 *
 * @module
 */
export * from './options.js';
export * from './pod.js';
export * from './scheduler.js';
export * from './state.js';
export * from './translate.js';
