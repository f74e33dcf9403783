/**
 * The transactional outbox: `AppState Change` events are produced from *committed* record changes, never
 * from the request that made them. In AWS the table's stream (NEW_AND_OLD_IMAGES) feeds the publisher
 * function, which maps each changed app item to one event ({@link changeEventOfImages}) and puts them on the
 * bus ({@link publishStreamRecords}), retrying entries PutEvents rejects and reporting what still fails as
 * batch item failures, so the stream retries them and finally sends them to the dead-letter queue.
 *
 * Every event carries `id` = `<handle>#<record version>`: the same committed change always has the same id,
 * however often it is delivered.
 *
 * @module
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import {
  APP_STATE_CHANGE_DETAIL_TYPE,
  APP_STATE_CHANGE_SOURCE,
  type AppStateChangeEvent,
} from '../runner/index.js';
import {
  type AppRecord,
  backoffDelay,
  type StateReason,
  sameStateReason,
  sleep as timerSleep,
} from '../specs/index.js';

/** The stable id of the change that produced `version` of the app's record. */
export function appStateChangeId(handle: string, version: number): string {
  return `${handle}#${version}`;
}

/**
 * The event for a committed change from `previous` to `record` at `version`, or undefined when neither the
 * state nor the state reason changed (a refresh of replica details, a cancel request). A change of reason
 * alone (a Batch job that became blocked for lack of capacity) is an event with `from` equal to `to`.
 * `from`, `time`, `source` and `reason` of a state change come from the history entry the transition
 * appended.
 */
export function changeEventOf(
  previous: { state: AppRecord['state']; stateReason?: StateReason | undefined } | undefined,
  record: AppRecord,
  version: number,
): AppStateChangeEvent | undefined {
  if (previous === undefined) return undefined;
  const stateChanged = previous.state !== record.state;
  const reasonChanged =
    record.stateReason !== undefined && !sameStateReason(previous.stateReason, record.stateReason);
  if (!stateChanged && !reasonChanged) return undefined;
  const entry = stateChanged ? record.history?.[record.history.length - 1] : undefined;
  const event: AppStateChangeEvent = {
    id: appStateChangeId(record.handle, version),
    version,
    handle: record.handle,
    scheduler: record.scheduler,
    appId: record.appId,
    owner: record.owner,
    session: record.session,
    name: record.name,
    from: previous.state,
    to: record.state,
    time: new Date(entry?.time ?? (stateChanged ? record.lastEventTime : record.updatedAt)).toISOString(),
    source: entry?.source ?? 'event',
  };
  const reason = entry?.reason ?? record.reason;
  if (reason !== undefined) event.reason = reason;
  if (record.stateReason !== undefined) event.stateReason = record.stateReason;
  if (record.attemptOutcomes !== undefined && record.attemptOutcomes.length > 0) {
    event.attemptOutcomes = record.attemptOutcomes;
  }
  return event;
}

/** The part of a DynamoDB stream record the publisher reads (the Lambda event's shape). */
export interface StreamRecord {
  eventName?: 'INSERT' | 'MODIFY' | 'REMOVE' | string;
  dynamodb?: {
    SequenceNumber?: string;
    // The Lambda event's images are the wire's AttributeValue maps.
    NewImage?: Record<string, unknown>;
    OldImage?: Record<string, unknown>;
  };
}

/**
 * The event a stream record stands for: a MODIFY of an app item whose state or state reason changed.
 * Inserts (new UNSUBMITTED records), removals (TTL), idempotency items and other updates stand for none.
 */
export function changeEventOfStreamRecord(record: StreamRecord): AppStateChangeEvent | undefined {
  if (record.eventName !== 'MODIFY') return undefined;
  const newImage = record.dynamodb?.NewImage;
  const oldImage = record.dynamodb?.OldImage;
  if (!newImage || !oldImage) return undefined;
  const next = unmarshall(newImage as Record<string, AttributeValue>);
  const previous = unmarshall(oldImage as Record<string, AttributeValue>);
  if (next.entity !== 'App' || typeof next.version !== 'number') return undefined;
  return changeEventOf(previous as AppRecord, next as AppRecord, next.version);
}

/** One PutEvents request entry. */
export interface PutEventsEntry {
  EventBusName: string;
  Source: string;
  DetailType: string;
  Resources: string[];
  Detail: string;
}

/** PutEvents' answer: one result per entry, in order; failed ones carry an `ErrorCode`. */
export interface PutEventsResult {
  FailedEntryCount?: number;
  Entries?: { EventId?: string; ErrorCode?: string; ErrorMessage?: string }[];
}

/** How {@link publishStreamRecords} and the local outbox publish. */
export interface PublishOptions {
  busName: string;
  /** Sends one PutEvents request (at most 10 entries). */
  putEvents: (entries: PutEventsEntry[]) => Promise<PutEventsResult>;
  /** Rounds of sending what failed before giving up (default 3). */
  attempts?: number;
  /** Waits out the back-off between rounds ({@link PUBLISH_BACKOFF}; default: a timer). */
  sleep?: (ms: number) => Promise<void>;
}

/** What one stream batch did. */
export interface PublishReport {
  /** Events put on the bus. */
  published: number;
  /** Stream records that stand for no event. */
  skipped: number;
  /** Entries PutEvents rejected and that were sent again. */
  retried: number;
  /** Stream records whose event could not be published (the stream delivers them again). */
  batchItemFailures: { itemIdentifier: string }[];
}

/** PutEvents takes at most 10 entries per request. */
const MAX_ENTRIES_PER_PUT = 10;
/** Back-off between publishing rounds: full jitter below 100 ms, then 200 ms, … up to 5 s. */
export const PUBLISH_BACKOFF = { baseMs: 100, capMs: 5_000 } as const;

/** The PutEvents entry of an event. */
export function putEventsEntry(busName: string, event: AppStateChangeEvent): PutEventsEntry {
  return {
    EventBusName: busName,
    Source: APP_STATE_CHANGE_SOURCE,
    DetailType: APP_STATE_CHANGE_DETAIL_TYPE,
    Resources: [],
    Detail: JSON.stringify(event),
  };
}

/**
 * Puts `events` on the bus, 10 per request, sending again (with back-off) the entries PutEvents rejected
 * (`FailedEntryCount`, per-entry `ErrorCode`) or whose request failed as a whole.
 *
 * @returns the indexes (into `events`) that still failed after every attempt, and how many were resent.
 */
export async function putAllEvents(
  events: readonly AppStateChangeEvent[],
  options: PublishOptions,
): Promise<{ failed: number[]; retried: number }> {
  const attempts = options.attempts ?? 3;
  const sleep = options.sleep ?? timerSleep;
  let pending = events.map((_, i) => i);
  let retried = 0;
  for (let round = 0; round < attempts && pending.length > 0; round++) {
    if (round > 0) {
      retried += pending.length;
      await sleep(backoffDelay(round - 1, PUBLISH_BACKOFF));
    }
    const stillFailing: number[] = [];
    for (let start = 0; start < pending.length; start += MAX_ENTRIES_PER_PUT) {
      const chunk = pending.slice(start, start + MAX_ENTRIES_PER_PUT);
      const entries = chunk.map((i) => putEventsEntry(options.busName, events[i] as AppStateChangeEvent));
      let result: PutEventsResult;
      try {
        result = await options.putEvents(entries);
      } catch {
        // The whole request failed (throttled past the SDK's retries, network): every entry goes again.
        stillFailing.push(...chunk);
        continue;
      }
      chunk.forEach((index, position) => {
        const entry = result.Entries?.[position];
        if (entry === undefined || entry.ErrorCode !== undefined || entry.EventId === undefined) {
          stillFailing.push(index);
        }
      });
    }
    pending = stillFailing;
  }
  return { failed: pending, retried };
}

/**
 * Publishes the events of a stream batch at least once. Entries PutEvents rejects are retried; a record
 * whose event still fails is reported as a batch item failure (with `ReportBatchItemFailures`, Lambda
 * retries the batch from the first failed record, then bisects, then sends it to the on-failure
 * destination). Records after a failure that were published are delivered again: consumers deduplicate
 * on the event `id`.
 */
export async function publishStreamRecords(
  records: readonly StreamRecord[],
  options: PublishOptions,
): Promise<PublishReport> {
  const events: AppStateChangeEvent[] = [];
  const sequenceNumbers: string[] = [];
  let skipped = 0;
  for (const record of records) {
    const event = changeEventOfStreamRecord(record);
    if (event === undefined) {
      skipped += 1;
      continue;
    }
    events.push(event);
    sequenceNumbers.push(record.dynamodb?.SequenceNumber ?? '');
  }
  const { failed, retried } = await putAllEvents(events, options);
  return {
    published: events.length - failed.length,
    skipped,
    retried,
    batchItemFailures: failed.map((i) => ({ itemIdentifier: sequenceNumbers[i] ?? '' })),
  };
}
