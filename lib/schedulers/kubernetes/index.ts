/**
 * The Kubernetes (Volcano) scheduler (`kubernetes`): run options, the pure Volcano Job translation, the pod
 * parts shared with `kubernetes_mcad`, the state tables and the scheduler.
 *
 * @module
 */

export * from './client.js';
export * from './eks-token.js';
export * from './kube-scheduler.js';
export * from './kubeconfig.js';
export * from './options.js';
export * from './pod.js';
export * from './scheduler.js';
export * from './state.js';
export * from './translate.js';
export * from './workspace.js';
