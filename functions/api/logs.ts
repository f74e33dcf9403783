/** `GET /v1/apps/{scheduler}/{appId}/logs`: one page of a replica's log lines. */
import type { LogPageRequest, LogStream } from '../../lib/schedulers/index.js';
import { ValidationError } from '../../lib/specs/index.js';
import { runner } from '../schedulers/table.js';
import { apiHandler } from '../shared/middleware.js';
import { intParam, timeParam } from '../shared/query.js';
import { appFromPath } from './handle.js';

const STREAMS: readonly LogStream[] = ['combined', 'stdout', 'stderr'];

export const handler = apiHandler({ operation: 'Logs' }, async (req) => {
  const { handle, scheduler } = appFromPath(req);
  const request: LogPageRequest = {
    role: req.query('role') ?? '',
    replica: intParam('replica', req.query('replica'), 0, 100_000) ?? 0,
  };
  const streams = req.query('streams');
  if (streams !== undefined) {
    if (!STREAMS.includes(streams as LogStream)) {
      throw ValidationError.forField('streams', `must be one of ${STREAMS.join(', ')}, got '${streams}'`);
    }
    request.streams = streams as LogStream;
  }
  const regex = req.query('regex');
  // The regex engine (re2js, ~150 KB) is loaded only by a request that filters.
  const filter =
    regex === undefined || regex === ''
      ? undefined
      : (await import('../../lib/schedulers/log-filter.js')).compileLogFilter(regex);
  const since = timeParam('since', req.query('since'));
  const until = timeParam('until', req.query('until'));
  const limit = intParam('limit', req.query('limit'), 1, 10_000);
  const nextToken = req.query('nextToken');
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
