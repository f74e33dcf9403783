/**
 * Where an AWS scheduler gets its CloudWatch Logs client. Only a log read needs it, so the client code
 * (`@aws-sdk/client-cloudwatch-logs`, with the CloudWatch paging in `cloudwatch-logs.ts`) is imported on the
 * first read: a run, a status, a cancel or a delete loads none of it.
 *
 * @module
 */
import type { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';

/** A CloudWatch Logs client, or a function that builds one the first time a log is read. */
export type LogsClientSource = CloudWatchLogsClient | (() => Promise<CloudWatchLogsClient>);

/**
 * The client of `source` (of `fallback` when undefined), built at most once: the returned function resolves
 * to the same client on every call.
 */
export function logsClientOf(
  source: LogsClientSource | undefined,
  fallback: () => Promise<CloudWatchLogsClient>,
): () => Promise<CloudWatchLogsClient> {
  if (source !== undefined && typeof source !== 'function') {
    const client = Promise.resolve(source);
    return () => client;
  }
  const make = source ?? fallback;
  let client: Promise<CloudWatchLogsClient> | undefined;
  return () => {
    client ??= make();
    return client;
  };
}
