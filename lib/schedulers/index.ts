/**
 * The scheduler contract, its registry and shared helpers. Backends live in their own folders
 * (`aws-batch/`, `aws-sagemaker/`, `local-cwd/`) and are imported directly by whoever wires them.
 *
 * @module
 */
export * from './errors.js';
export * from './logs.js';
export * from './registry.js';
export * from './scheduler.js';
