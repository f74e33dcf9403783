/**
 * The `aws_sagemaker` scheduler: AppDefs as Amazon SageMaker training jobs. `state.ts` is pure and is what
 * the EventBridge handler uses to turn "SageMaker Training Job State Change" events into transitions.
 *
 * @module
 */
export * from './log-reader.js';
export * from './names.js';
export * from './opts.js';
export * from './scheduler.js';
export * from './sdk-errors.js';
export * from './state.js';
export * from './translate.js';
export * from './translator.js';
export * from './workspace.js';
