/**
 * JSON views of records for the API: summaries for lists, details for status. Times become ISO strings.
 */
import { recordRevision, statusOfRecord } from '../../lib/runner/index.js';
import type { AppRecord } from '../../lib/specs/index.js';

const iso = (ms: number) => new Date(ms).toISOString();

/** `AppSummary` of `GET /v1/apps`. */
export function summaryView(record: AppRecord) {
  const view: Record<string, unknown> = {
    handle: record.handle,
    scheduler: record.scheduler,
    session: record.session,
    appId: record.appId,
    name: record.name,
    owner: record.owner,
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
    handle: record.handle,
    scheduler: record.scheduler,
    session: record.session,
    appId: record.appId,
    name: record.name,
    owner: record.owner,
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
  return {
    handle: record.handle,
    scheduler: record.scheduler,
    session: record.session,
    appId: record.appId,
    state: record.state,
  };
}
