/**
 * The vocabulary of torchx-serverless: AppDef / Role / Resource, AppState and AppStatus, macros, run
 * options, app handles, named resources, dry runs, app records and errors. Imports no AWS SDK.
 *
 * @module
 */
export * from './api.js';
export * from './app-def.js';
export * from './app-handle.js';
export * from './app-record.js';
export * from './app-state.js';
export * from './aws-errors.js';
export * from './backoff.js';
export * from './canonical-json.js';
export * from './clone.js';
export * from './dryrun.js';
export * from './errors.js';
export * from './fnmatch.js';
export * from './host-access.js';
export * from './ids.js';
export * from './limits.js';
export * from './macros.js';
export * from './named-resources.js';
export * from './names.js';
export * from './run-opts.js';
export * from './schema.js';
export { isStorableNumber, MAX_BODY_DEPTH, toFieldIssues } from './schema-fields.js';
export * from './shlex.js';
export * from './state-reason.js';
export * from './status.js';
export * from './suggest.js';
export * from './workspace-offer.js';
