import { describe, expect, it } from 'vitest';
import { HEADERS, QUERIES } from '../../../functions/shared/queries.js';
import { parseParams } from '../../../functions/shared/query.js';
import { ValidationError } from '../../../lib/specs/index.js';
import { buildOpenApiDocument } from '../../../scripts/openapi-document.js';

/** A reader of the given query parameters. */
const from = (query: Record<string, string>) => (name: string) => query[name];

/** The message of the ValidationError `fn` throws, and the field it names. */
function refusal(fn: () => unknown): { field: string | undefined; message: string } {
  try {
    fn();
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    return { field: error.issues[0]?.path, message: error.message };
  }
  throw new Error('nothing was refused');
}

describe('parseParams', () => {
  it('gives each parameter its value: integers, times, flags, states; an empty one is absent', () => {
    expect(
      parseParams(QUERIES.Logs, from({ replica: '3', since: '1000', limit: '', streams: 'stderr' })),
    ).toEqual({ replica: 3, since: new Date(1000), streams: 'stderr' });
    expect(parseParams(QUERIES.Status, from({ refresh: '1' }))).toEqual({ refresh: true });
    expect(parseParams(QUERIES.List, from({ state: 'running,Pending' }))).toEqual({
      state: ['RUNNING', 'PENDING'],
    });
  });

  it.each([
    [{ limit: '500' }, 'limit', 'limit: must be between 1 and 100, got 500'],
    [{ limit: '1e2' }, 'limit', "limit: must be an integer between 1 and 100, got '1e2'"],
    [
      { since: 'yesterday' },
      'since',
      "since: must be an ISO-8601 time (2026-11-22T10:00:00Z) or epoch milliseconds, got 'yesterday'",
    ],
    [
      { state: 'RUNNING,DONE' },
      'state',
      "state: unknown state 'DONE'; use PENDING, RUNNING, SUCCEEDED, FAILED, CANCELLED, …",
    ],
    [
      { scheduler: 'no spaces' },
      'scheduler',
      'scheduler: must be a scheduler name such as local_cwd or aws_batch',
    ],
  ])('refuses %j with a message naming the parameter', (query, field, message) => {
    expect(refusal(() => parseParams(QUERIES.List, from(query)))).toEqual({ field, message });
  });

  it('refuses a flag, a stream and a revision that are not one of theirs', () => {
    expect(refusal(() => parseParams(QUERIES.Status, from({ refresh: 'yes' }))).message).toBe(
      "refresh: must be true or false, got 'yes'",
    );
    expect(refusal(() => parseParams(QUERIES.Logs, from({ streams: 'both' }))).message).toBe(
      "streams: must be one of combined, stdout, stderr, got 'both'",
    );
    expect(refusal(() => parseParams(QUERIES.Status, from({ waitFor: 'short' }))).field).toBe('waitFor');
  });

  it('checks an empty header when asked to (an empty Idempotency-Key is refused, not ignored)', () => {
    const read = from({ 'Idempotency-Key': '' });
    expect(parseParams(HEADERS.Run, read)).toEqual({});
    expect(refusal(() => parseParams(HEADERS.Run, read, { keepEmpty: true }))).toEqual({
      field: 'Idempotency-Key',
      message: 'Idempotency-Key: must be 1–255 printable ASCII characters without spaces',
    });
  });
});

describe('the OpenAPI parameters', () => {
  const parameters = (path: string, method: string) =>
    (
      (buildOpenApiDocument().paths as Record<string, Record<string, { parameters?: unknown[] }>>)[path]?.[
        method
      ]?.parameters ?? []
    ).map((p) => p as { name: string; in: string; description?: string; schema: Record<string, unknown> });

  it('are the schemas the handlers parse with: bounds, patterns and descriptions', () => {
    const logs = parameters('/v1/apps/{scheduler}/{appId}/logs', 'get');
    expect(logs.find((p) => p.name === 'limit')).toEqual({
      name: 'limit',
      in: 'query',
      description: 'page size (lines)',
      schema: { type: 'integer', minimum: 1, maximum: 10_000 },
    });
    const key = parameters('/v1/apps', 'post').find((p) => p.name === 'Idempotency-Key');
    expect(key?.in).toBe('header');
    expect(new RegExp(String(key?.schema.pattern)).test('a b')).toBe(false);
    expect(new RegExp(String(key?.schema.pattern)).test('retry-1')).toBe(true);
    expect(parameters('/v1/apps', 'get').map((p) => p.name)).toEqual(Object.keys(QUERIES.List.shape));
  });
});
