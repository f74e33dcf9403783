/**
 * Bounds on what an app record keeps, so no transition can push its item past DynamoDB's 400 KB limit
 * (which would leave the app short of its terminal state forever). Applied to every record a transition
 * writes, in stages, each only when the item is still too large:
 * 1. always: the reason is cut to {@link MAX_REASON_BYTES}, a history reason to {@link MAX_HISTORY_REASON_BYTES},
 *    a replica's error document and reason to {@link MAX_REPLICA_TEXT_BYTES} (cut text ends with a marker;
 *    a cut error document becomes a small JSON document with `truncated: true`);
 * 2. replicas after the first {@link DETAILED_REPLICAS} lose their error text (`<ELIDED>`) and reason;
 * 3. every replica does;
 * 4. the reason and history are cut further (history to its first and last few entries).
 * The history itself is already bounded to its first and newest entries (`applyTransition`).
 *
 * @module
 */
import {
  type AppRecord,
  HISTORY_HEAD,
  type HistoryEntry,
  type ReplicaStatus,
  type RoleStatus,
} from '../specs/index.js';
import { MAX_ITEM_BYTES } from './item-size.js';

/** Longest app reason kept (bytes of UTF-8). */
export const MAX_REASON_BYTES = 8 * 1024;
/** Longest reason kept per history entry. */
export const MAX_HISTORY_REASON_BYTES = 1024;
/** Longest error document or reason kept per replica. */
export const MAX_REPLICA_TEXT_BYTES = 2 * 1024;
/** Replicas that keep their error text when the record is too large to keep everyone's. */
export const DETAILED_REPLICAS = 16;
/** What a replica's error document becomes when it was dropped to fit the item limit. */
export const ELIDED = '<ELIDED>';
/** Largest item a transition writes: DynamoDB's limit less a margin for attribute rounding. */
export const MAX_RECORD_BYTES = MAX_ITEM_BYTES - 2 * 1024;

const NONE = '<NONE>';

/** `text` cut to at most `maxBytes` UTF-8 bytes, ending with a marker that says how long it was. */
export function truncateText(text: string, maxBytes: number): string {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes <= maxBytes) return text;
  const marker = ` … [truncated: ${bytes} bytes]`;
  const keep = Math.max(0, maxBytes - Buffer.byteLength(marker, 'utf8'));
  // Cutting a UTF-8 buffer may split a character: decode drops the partial tail as U+FFFD; trim it.
  const head = Buffer.from(text, 'utf8')
    .subarray(0, keep)
    .toString('utf8')
    .replace(/\uFFFD+$/, '');
  return `${head}${marker}`;
}

/** A replica error document cut to `maxBytes`, still JSON: `{"truncated":true,"bytes":N,"head":"…"}`. */
export function truncateErrorDocument(document: string, maxBytes: number): string {
  const bytes = Buffer.byteLength(document, 'utf8');
  if (bytes <= maxBytes) return document;
  // JSON escaping can grow the text: leave room for it and the envelope.
  const head = truncateText(document, Math.floor(maxBytes / 2) - 64);
  return JSON.stringify({ truncated: true, bytes, head });
}

function boundReplica(replica: ReplicaStatus, keepText: boolean): ReplicaStatus {
  const next: ReplicaStatus = { ...replica };
  if (!keepText) {
    if (next.structuredErrorMsg !== NONE) next.structuredErrorMsg = ELIDED;
    delete next.reason;
    return next;
  }
  next.structuredErrorMsg = truncateErrorDocument(replica.structuredErrorMsg, MAX_REPLICA_TEXT_BYTES);
  if (replica.reason !== undefined) next.reason = truncateText(replica.reason, MAX_REPLICA_TEXT_BYTES);
  return next;
}

function boundRoles(roles: readonly RoleStatus[], detailed: number): RoleStatus[] {
  let seen = 0;
  return roles.map((role) => ({
    ...role,
    replicas: role.replicas.map((replica) => boundReplica(replica, seen++ < detailed)),
  }));
}

function boundHistory(history: readonly HistoryEntry[], reasonBytes: number): HistoryEntry[] {
  return history.map((entry) =>
    entry.reason === undefined ? entry : { ...entry, reason: truncateText(entry.reason, reasonBytes) },
  );
}

/**
 * The record bounded to fit `maxBytes` as measured by `sizeOf` (the size of its item), in the stages above
 * (a new object; `record` is not modified). The result may still be larger than `maxBytes` only when the
 * app and cfg alone nearly are (records are created with at most 300 KB of them).
 */
export function boundRecord(
  record: AppRecord,
  sizeOf: (record: AppRecord) => number,
  maxBytes = MAX_RECORD_BYTES,
): AppRecord {
  // Items written before a field existed may lack it: bound what is there.
  const roles = record.roles ?? [];
  const stage1: AppRecord = {
    ...record,
    roles: boundRoles(roles, Number.POSITIVE_INFINITY),
    history: boundHistory(record.history ?? [], MAX_HISTORY_REASON_BYTES),
  };
  if (record.reason !== undefined) stage1.reason = truncateText(record.reason, MAX_REASON_BYTES);
  if (sizeOf(stage1) <= maxBytes) return stage1;
  const stage2 = { ...stage1, roles: boundRoles(roles, DETAILED_REPLICAS) };
  if (sizeOf(stage2) <= maxBytes) return stage2;
  const stage3 = { ...stage2, roles: boundRoles(roles, 0) };
  if (sizeOf(stage3) <= maxBytes) return stage3;
  const tail = 5;
  const history = stage3.history;
  const stage4: AppRecord = { ...stage3 };
  if (history.length > HISTORY_HEAD + tail) {
    stage4.history = boundHistory([...history.slice(0, HISTORY_HEAD), ...history.slice(-tail)], 256);
    stage4.historyElided = (record.historyElided ?? 0) + history.length - HISTORY_HEAD - tail;
  }
  if (record.reason !== undefined) stage4.reason = truncateText(record.reason, 1024);
  return stage4;
}
