import { createError } from '@middy/util';
import { describe, expect, it } from 'vitest';
import {
  errorResponse,
  HTTP_ERRORS,
  HttpRequestError,
  STATUS_BY_CODE,
  statusForCode,
} from '../../../functions/shared/http-errors.js';
import { IdempotencyConflictError } from '../../../lib/runner/index.js';
import {
  BackendAccessDeniedError,
  BackendError,
  BackendNotConfiguredError,
  BackendValidationError,
} from '../../../lib/schedulers/index.js';
import { UnknownAppError, ValidationError } from '../../../lib/specs/index.js';
import { StoreTableNotFoundError, StoreUnavailableError, toStoreError } from '../../../lib/store/index.js';

describe('errorResponse', () => {
  it('answers a caller mistake with 400, its code, message and field details', () => {
    const response = errorResponse(ValidationError.forField('cfg.queue', 'is required'), 'req-1');
    expect(response.statusCode).toBe(400);
    expect(JSON.parse(response.body)).toEqual({
      error: {
        code: 'ValidationFailed',
        message: 'cfg.queue: is required',
        requestId: 'req-1',
        retryable: false,
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
    const throttled = errorResponse(new BackendError('throttled', true), 'r');
    expect(throttled.headers['retry-after']).toBe('5');
    expect(JSON.parse(throttled.body).error.retryable).toBe(true);
    const unconfigured = errorResponse(new BackendNotConfiguredError('no region'), 'r');
    expect(unconfigured.headers['retry-after']).toBeUndefined();
    expect(JSON.parse(unconfigured.body).error.retryable).toBe(false);
  });

  it('marks a backend error not retryable when the error itself knows retrying cannot help', () => {
    const rejected = errorResponse(new BackendError('rejected by AWS', false), 'r');
    expect(rejected.statusCode).toBe(503);
    expect(rejected.headers['retry-after']).toBeUndefined();
    expect(JSON.parse(rejected.body).error.retryable).toBe(false);
  });

  it('sends Retry-After exactly on the codes marked retryable, and retryable in every body', () => {
    for (const [code, fact] of Object.entries(HTTP_ERRORS)) {
      const error = new HttpRequestError(code as keyof typeof HTTP_ERRORS, 'm');
      const response = errorResponse(error, 'r');
      expect(response.statusCode, code).toBe(fact.status);
      expect(JSON.parse(response.body).error.retryable, code).toBe(fact.retryable);
      expect(response.headers['retry-after'] !== undefined, code).toBe(fact.retryable);
    }
    expect(HTTP_ERRORS.BackendNotConfigured.retryable).toBe(false);
    expect(HTTP_ERRORS.BackendAccessDenied.retryable).toBe(false);
    expect(HTTP_ERRORS.BackendError.retryable).toBe(true);
  });

  it('turns a middy body-parser error into InvalidJson (the media type is checked before it)', () => {
    const badJson = createError(415, 'Invalid or malformed JSON was provided', {
      cause: { package: '@middy/http-json-body-parser', message: 'Unexpected end of JSON input' },
    });
    const invalid = errorResponse(badJson, 'r');
    expect(invalid.statusCode).toBe(400);
    expect(JSON.parse(invalid.body).error).toMatchObject({
      code: 'InvalidJson',
      message: 'The request body is not valid JSON: Unexpected end of JSON input',
    });
  });

  it('hides the internals of anything unexpected behind the request id', () => {
    const response = errorResponse(new TypeError('secret stack detail'), 'req-9');
    expect(response.statusCode).toBe(500);
    expect(response.body).not.toContain('secret');
    expect(JSON.parse(response.body).error).toEqual({
      code: 'InternalError',
      message: 'Internal error (request id req-9)',
      requestId: 'req-9',
      retryable: false,
    });
  });

  it('gives every other code of ours a 4xx unless it is server-side', () => {
    expect(statusForCode('UnknownComponent')).toBe(400);
    expect(statusForCode('StoreTableNotFound')).toBe(500);
    expect(statusForCode('StoreError')).toBe(500); // an unclassified store failure is ours, not the caller's
    expect(statusForCode('BackendNotConfigured')).toBe(503);
  });

  it('answers a DynamoDB ValidationException naming the table with our words and a 500, not its text', () => {
    const sdk = Object.assign(
      new Error(
        'One or more parameter values were invalid: Size of hashkey has exceeded the maximum size limit of ' +
          '2048 bytes (table txs-prod-AppRecords-1A2B3C)',
      ),
      { name: 'ValidationException', $metadata: { httpStatusCode: 400 } },
    );
    const storeError = toStoreError(sdk, 'GetItem', 'txs-prod-AppRecords-1A2B3C');
    expect(storeError.message).toContain('txs-prod-AppRecords-1A2B3C'); // kept for the server-side log
    const response = errorResponse(storeError, 'req-7');
    expect(response.statusCode).toBe(500);
    expect(response.body).not.toMatch(/txs-prod|ValidationException|hashkey|DynamoDB|GetItem/);
    expect(JSON.parse(response.body).error).toEqual({
      code: 'StoreError',
      message: 'The app record store failed this request (request id req-7)',
      requestId: 'req-7',
      retryable: false,
    });
  });

  it.each([
    [new StoreTableNotFoundError('txs-prod-AppRecords-1A2B3C'), 500, /txs-prod/],
    [
      new StoreUnavailableError("DynamoDB GetItem on 'txs-prod-T' failed after retries"),
      503,
      /txs-prod|GetItem/,
    ],
    [
      new BackendAccessDeniedError(
        'AWS denied batch:SubmitJob (AccessDeniedException: User: arn:aws:sts::123456789012:assumed-role/Run is not authorized)',
      ),
      502,
      /123456789012|assumed-role|AccessDeniedException/,
    ],
    [
      new BackendError('batch:SubmitJob was rejected by AWS (ClientException: queue arn:aws:batch:x)', false),
      503,
      /arn:|ClientException/,
    ],
    [
      new BackendValidationError(
        'SageMaker rejected CreateTrainingJob: role arn:aws:iam::123456789012:role/x',
        [{ path: 'cfg', message: 'SageMaker says: role arn:aws:iam::123456789012:role/x' }],
      ),
      400,
      /123456789012|SageMaker says/,
    ],
  ])('replaces the AWS or DynamoDB text of %s with our words', (error, status, internal) => {
    const response = errorResponse(error, 'req-8');
    expect(response.statusCode).toBe(status);
    expect(response.body).not.toMatch(internal);
    const body = JSON.parse(response.body).error as { code: string; message: string; details?: unknown };
    expect(body.code).toBe(error.code);
    expect(body.message).toMatch(/\(request id req-8\)$/);
    expect(body.details).toBeUndefined();
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
