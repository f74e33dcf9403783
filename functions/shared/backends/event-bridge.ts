/** The publisher function's PutEvents call: built once per cold start, on the first stream batch. */
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import type { PutEventsEntry, PutEventsResult } from '../../../lib/events/outbox.js';

/** Sends one PutEvents request through a client made (and reported to the container) by `created`. */
export function eventBridgePutEvents(
  created: <T extends object>(client: T) => T,
): (entries: PutEventsEntry[]) => Promise<PutEventsResult> {
  const client = created(new EventBridgeClient({}));
  return (entries) => client.send(new PutEventsCommand({ Entries: entries }));
}
