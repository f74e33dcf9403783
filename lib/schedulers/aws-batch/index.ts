/**
 * The AWS Batch scheduler (`aws_batch`): translation (pure, and the translator without SDK clients that the
 * scheduler holds), state mapping (pure, shared with the EventBridge handler), run options and the scheduler.
 *
 * @module
 */
export * from './app-id.js';
export * from './checks.js';
export * from './container.js';
export * from './describe-mapping.js';
export * from './options.js';
export * from './scheduler.js';
export * from './sdk-errors.js';
export * from './state.js';
export * from './task-containers.js';
export * from './translate.js';
export * from './translator.js';
export * from './workspace.js';
