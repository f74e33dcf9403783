/**
 * JSON views of records for the API: summaries for lists, details for status. Times become ISO strings.
 */
import { recordRevision, statusOfRecord } from '../../lib/runner/index.js';
import type { AppRecord } from '../../lib/specs/index.js';

const iso = (ms: number) => new Date(ms).toISOString();

/** What names an app: its handle and the parts of it. */
const handleFields = (record: AppRecord) => ({
  handle: record.handle,
  scheduler: record.scheduler,
  session: record.session,
  appId: record.appId,
});

/** The handle, the app's name and its owner. */
const identityFields = (record: AppRecord) => ({
  ...handleFields(record),
  name: record.name,
  owner: record.owner,
});

/** `AppSummary` of `GET /v1/apps`. */
export function summaryView(record: AppRecord) {
  const view: Record<string, unknown> = {
    ...identityFields(record),
    state: record.state,
    createdAt: iso(record.createdAt),
    updatedAt: iso(record.updatedAt),
  };
  if (record.reason !== undefined) view.reason = record.reason;
  if (record.stateReason !== undefined) view.stateReason = record.stateReason;
  return view;
}

/** The body of `GET /v1/apps/{scheduler}/{appId}`. */
export function detailView(record: AppRecord) {
  const view: Record<string, unknown> = {
    ...identityFields(record),
    createdAt: iso(record.createdAt),
    updatedAt: iso(record.updatedAt),
    status: statusOfRecord(record).toJSON(),
    app: record.app,
    cfg: record.cfg,
    history: record.history.map((h) => ({ ...h, time: iso(h.time) })),
    revision: recordRevision(record),
  };
  if (record.workspace !== undefined) view.workspace = record.workspace;
  if (record.historyElided !== undefined) view.historyElided = record.historyElided;
  if (record.cancelRequestedAt !== undefined) view.cancelRequestedAt = iso(record.cancelRequestedAt);
  return view;
}

/** The short body of run, cancel and delete responses. */
export function handleView(record: AppRecord) {
  return { ...handleFields(record), state: record.state };
}
