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

/** The SDK retry mode of a default Logs client: each scheduler's, as its own service client has. */
export type LogsRetryMode = 'adaptive' | 'standard';

const defaults = new Map<LogsRetryMode, Promise<CloudWatchLogsClient>>();

/** The process's default Logs client for `retryMode` (5 attempts), its code imported on the first call. */
function defaultLogsClient(retryMode: LogsRetryMode): Promise<CloudWatchLogsClient> {
  let client = defaults.get(retryMode);
  if (client === undefined) {
    client = import('./cloudwatch-logs.js').then(
      ({ CloudWatchLogsClient }) => new CloudWatchLogsClient({ maxAttempts: 5, retryMode }),
    );
    defaults.set(retryMode, client);
  }
  return client;
}

/**
 * The client of `source` (the process's default for `retryMode` when undefined), built at most once: the
 * returned function resolves to the same client on every call.
 */
export function logsClientOf(
  source: LogsClientSource | undefined,
  retryMode: LogsRetryMode,
): () => Promise<CloudWatchLogsClient> {
  if (source !== undefined && typeof source !== 'function') {
    const client = Promise.resolve(source);
    return () => client;
  }
  const make = source ?? (() => defaultLogsClient(retryMode));
  let client: Promise<CloudWatchLogsClient> | undefined;
  return () => {
    client ??= make();
    return client;
  };
}
