import { createError } from '@middy/util';
import { describe, expect, it } from 'vitest';
import {
  errorResponse,
  HttpRequestError,
  STATUS_BY_CODE,
  statusForCode,
} from '../../../functions/shared/http-errors.js';
import { IdempotencyConflictError } from '../../../lib/runner/index.js';
import { BackendError, BackendNotConfiguredError } from '../../../lib/schedulers/index.js';
import { UnknownAppError, ValidationError } from '../../../lib/specs/index.js';

describe('errorResponse', () => {
  it('answers a caller mistake with 400, its code, message and field details', () => {
    const response = errorResponse(ValidationError.forField('cfg.queue', 'is required'), 'req-1');
    expect(response.statusCode).toBe(400);
    expect(JSON.parse(response.body)).toEqual({
      error: {
        code: 'ValidationFailed',
        message: 'cfg.queue: is required',
        requestId: 'req-1',
        details: [{ path: 'cfg.queue', message: 'is required' }],
      },
    });
  });

  it.each([
    [new UnknownAppError('local_cwd://torchx/x'), 404],
    [new IdempotencyConflictError('k'), 422],
    [new BackendError('throttled', true), 503],
    [new BackendNotConfiguredError('no region'), 503],
  ])('maps %s to %i', (error, status) => {
    expect(errorResponse(error, 'r').statusCode).toBe(status);
  });

  it('asks for a retry on throttling but not on a missing AWS configuration', () => {
    expect(errorResponse(new BackendError('throttled', true), 'r').headers['retry-after']).toBe('5');
    expect(
      errorResponse(new BackendNotConfiguredError('no region'), 'r').headers['retry-after'],
    ).toBeUndefined();
  });

  it('turns middy body-parser errors into InvalidJson and UnsupportedMediaType', () => {
    const badJson = createError(415, 'Invalid or malformed JSON was provided', {
      cause: { package: '@middy/http-json-body-parser', message: 'Unexpected end of JSON input' },
    });
    const invalid = errorResponse(badJson, 'r');
    expect(invalid.statusCode).toBe(400);
    expect(JSON.parse(invalid.body).error).toMatchObject({
      code: 'InvalidJson',
      message: 'The request body is not valid JSON: Unexpected end of JSON input',
    });
    const wrongType = createError(415, 'Unsupported Media Type', {
      cause: { package: '@middy/http-json-body-parser' },
    });
    expect(errorResponse(wrongType, 'r').statusCode).toBe(415);
  });

  it('hides the internals of anything unexpected behind the request id', () => {
    const response = errorResponse(new TypeError('secret stack detail'), 'req-9');
    expect(response.statusCode).toBe(500);
    expect(response.body).not.toContain('secret');
    expect(JSON.parse(response.body).error).toEqual({
      code: 'InternalError',
      message: 'Internal error (request id req-9)',
      requestId: 'req-9',
    });
  });

  it('gives every other code of ours a 4xx unless it is server-side', () => {
    expect(statusForCode('UnknownComponent')).toBe(400);
    expect(statusForCode('StoreTableNotFound')).toBe(500);
  });

  it('maps every API error code to a status, and an unknown code does not compile', () => {
    for (const [code, status] of Object.entries(STATUS_BY_CODE)) {
      expect(status, code).toBeGreaterThanOrEqual(400);
      expect(status, code).toBeLessThan(600);
    }
    // @ts-expect-error 'NoSuchCode' is not an ErrorCode: a typo is a type error, not a silent 400.
    expect(statusForCode('NoSuchCode')).toBe(500);
    // @ts-expect-error the HTTP layer raises only API error codes.
    expect(new HttpRequestError('UsageError', 'm').code).toBe('UsageError');
  });

  it('answers a CLI-only code (which never reaches the API) with a 500', () => {
    expect(statusForCode('UsageError')).toBe(500);
  });
});
