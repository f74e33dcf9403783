/**
 * The app record store over DynamoDB: {@link DynamoAppRecordStore} (implements the runner's
 * `AppRecordStore`), the table definition shared with the CDK stack and local mode, and the store's errors.
 *
 * @module
 */
export * from './bounds.js';
export * from './dynamo-app-record-store.js';
export * from './errors.js';
export * from './item-client.js';
export * from './item-size.js';
export { appPartitionKey } from './keys.js';
export * from './table.js';
