/** `GET /v1/apps/{scheduler}/{appId}/logs`: one page of a replica's log lines. */
import type { LogPageRequest, LogStream } from '../../lib/schedulers/index.js';
import { runner } from '../schedulers/table.js';
import { apiHandler } from '../shared/middleware.js';
import { QUERIES } from '../shared/queries.js';
import { parseParams } from '../shared/query.js';
import { appFromPath } from './handle.js';

export const handler = apiHandler({ operation: 'Logs' }, async (req) => {
  const { handle, scheduler } = appFromPath(req);
  const { role, replica, streams, regex, since, until, limit, nextToken } = parseParams(
    QUERIES.Logs,
    (name) => req.query(name),
  );
  const request: LogPageRequest = { role: role ?? '', replica: replica ?? 0 };
  if (streams !== undefined) request.streams = streams satisfies LogStream;
  // The regex engine (re2js, ~150 KB) is loaded only by a request that filters.
  const filter =
    regex === undefined || regex === ''
      ? undefined
      : (await import('../../lib/schedulers/log-filter.js')).compileLogFilter(regex);
  if (filter) request.filter = filter;
  if (since) request.since = since;
  if (until) request.until = until;
  if (limit !== undefined) request.limit = limit;
  if (nextToken) request.nextToken = nextToken;
  const page = await (await runner(scheduler)).readLogs(handle, request, req.scope);
  const body: Record<string, unknown> = { lines: page.lines, caughtUp: page.caughtUp };
  if (page.nextToken !== undefined) body.nextToken = page.nextToken;
  return { statusCode: 200, body };
});
