/**
 * A record's revision: a short digest of its whole content, which changes whenever anything in the record
 * does (a transition, fresher replica details, a cancel request). Status answers carry it, and a client
 * waiting for a change sends back the one it has seen (`GET …?waitFor=<revision>`).
 *
 * @module
 */
import { createHash } from 'node:crypto';
import { type AppRecord, canonicalJson } from '../specs/index.js';

/**
 * Longest a status request waits for its record to change (`waitSeconds`, and its default): well under API
 * Gateway's 29 s and the clients' request timeouts.
 */
export const MAX_WAIT_SECONDS = 20;

/** How a revision is written: 22 characters of base64url (132 bits of SHA-256). */
export const REVISION_PATTERN = /^[A-Za-z0-9_-]{22}$/;

const revisions = new WeakMap<AppRecord, string>();

/**
 * The revision of `record`: equal for records with equal content (whatever the key order DynamoDB gave),
 * different as soon as any field differs. Memoized per record object (cached records are frozen).
 *
 * @example
 * ```ts
 * recordRevision(record); // 'q3N0b2Y1Zk9xV3JtT2x6Qk'
 * ```
 */
export function recordRevision(record: AppRecord): string {
  let revision = revisions.get(record);
  if (revision === undefined) {
    revision = createHash('sha256').update(canonicalJson(record)).digest('base64url').slice(0, 22);
    revisions.set(record, revision);
  }
  return revision;
}
