/**
 * `torchx-serverless/cdk`: the control plane as a construct (and as a stack) for other CDK apps. The
 * functions ship prebuilt in the package, so synthesizing needs no bundler and no sources.
 *
 * @module
 */
export { HandlerFunction, type HandlerFunctionProps } from './constructs/handler-function.js';
export {
  BundlingError,
  bundleFunction,
  INITIAL_CHUNK_GROUP,
  LAMBDA_BUNDLING,
  type LambdaBuildOptions,
  lambdaBuildOptions,
} from './constructs/lambda-bundling.js';
export { type PropIssue, TorchxServerlessPropsError } from './constructs/prop-issues.js';
export { TorchxServerless } from './constructs/torchx-serverless.js';
export {
  DEFAULT_JOB_LOG_GROUPS,
  type DeployedScheduler,
  type SlurmClusterProps,
  type TorchxServerlessProps,
} from './constructs/torchx-serverless-props.js';
export { WorkspaceArchiveBucket, type WorkspaceArchiveBucketProps } from './constructs/workspace-bucket.js';
export { TorchxServerlessStack, type TorchxServerlessStackProps } from './stack.js';
