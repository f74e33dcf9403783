/**
 * The outbox publisher: the app table's stream (NEW_AND_OLD_IMAGES) → one normalized `AppState Change`
 * event per committed state change on the stack's bus, at least once, with the id `<handle>#<version>`.
 * Entries PutEvents rejects are retried here; records whose event still fails are returned as batch item
 * failures, so the stream delivers them again (then bisects, then sends them to the dead-letter queue).
 */
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { type PublishOptions, publishStreamRecords, type StreamRecord } from '../../lib/events/outbox.js';
import { ENV } from '../shared/env-names.js';
import { eventHandler } from '../shared/event-handler.js';
import { logger, metrics } from '../shared/powertools.js';
import { eventBridgePutEvents } from './put-events.js';

let putEvents: PublishOptions['putEvents'] | undefined;

/** Publishes the events of one stream batch; returns the records to deliver again. */
export async function publishChanges(
  event: { Records: readonly StreamRecord[] },
  options: Pick<PublishOptions, 'sleep'> = {},
): Promise<DynamoDBBatchResponse> {
  const busName = process.env[ENV.eventBusName];
  if (!busName) throw new Error(`environment variable ${ENV.eventBusName} is not set`);
  // Built here, not in the container: this bundle carries no scheduler, DynamoDB document or Logs code.
  putEvents ??= eventBridgePutEvents();
  const report = await publishStreamRecords(event.Records, { busName, putEvents, ...options });
  metrics.addMetric('AppStateChangesPublished', 'Count', report.published);
  if (report.retried > 0) metrics.addMetric('AppStateChangeRetries', 'Count', report.retried);
  if (report.batchItemFailures.length > 0) {
    metrics.addMetric('AppStateChangePublishFailures', 'Count', report.batchItemFailures.length);
    logger.warn('events not published; the stream delivers them again', {
      failures: report.batchItemFailures.length,
    });
  }
  return { batchItemFailures: report.batchItemFailures };
}

/** Forgets the EventBridge client (tests that replace the SDK between cases). */
export function resetPublisher(): void {
  putEvents = undefined;
}

export const handler = eventHandler<DynamoDBStreamEvent, DynamoDBBatchResponse>((event) =>
  publishChanges(event as { Records: StreamRecord[] }),
);
