/** The publisher function's PutEvents call: built once per cold start, on the first stream batch. */
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import type { PutEventsEntry, PutEventsResult } from '../../lib/events/outbox.js';
import { traceSdkCalls } from '../shared/tracing.js';

/**
 * Sends one PutEvents request through one EventBridge client (built once, from the environment), whose calls
 * are X-Ray subsegments like every client's.
 */
export function eventBridgePutEvents(): (entries: PutEventsEntry[]) => Promise<PutEventsResult> {
  const client = traceSdkCalls(new EventBridgeClient({}));
  return (entries) => client.send(new PutEventsCommand({ Entries: entries }));
}
