/** Measurement only: see ./client.ts. */
import { client, command } from './client.js';

export const CloudWatchLogsClient = client({
  serviceId: 'CloudWatch Logs',
  signing: 'logs',
  target: 'Logs_20140328',
});
export const GetLogEventsCommand = command('GetLogEvents');
export const DescribeLogStreamsCommand = command('DescribeLogStreams');
