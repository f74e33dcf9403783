/**
 * The one AWS error classification: each category once, with real SDK error shapes, and the lists checked
 * against the AWS SDK's own retry classification so an SDK release that changes it fails here.
 */
import {
  ConditionalCheckFailedException,
  ProvisionedThroughputExceededException,
} from '@aws-sdk/client-dynamodb';
import { isThrottlingError as sdkIsThrottling, isTransientError as sdkIsTransient } from '@smithy/core/retry';
import { describe, expect, it } from 'vitest';
import {
  ACCESS_DENIED_ERROR_NAMES,
  isAccessDeniedError,
  isNetworkError,
  isRetryableAwsError,
  isThrottlingError,
  isTransientError,
  THROTTLING_ERROR_NAMES,
} from '../../../lib/specs/index.js';

const metadata = (httpStatusCode?: number) => ({
  $metadata: httpStatusCode === undefined ? {} : { httpStatusCode },
});
const named = (name: string, httpStatusCode = 400) =>
  Object.assign(new Error(name), { name }, metadata(httpStatusCode));
const network = (code: string) => Object.assign(new Error(`connect ${code}`), { code }, metadata());

describe('AWS error classification', () => {
  it('calls throttling what the AWS SDK retries as throttling: its names, HTTP 429 and the throttling trait', () => {
    const dynamo = new ProvisionedThroughputExceededException({
      message: 'slow down',
      $metadata: { httpStatusCode: 400 },
    });
    expect(isThrottlingError(dynamo)).toBe(true);
    expect(isThrottlingError(named('SomethingNew', 429))).toBe(true);
    expect(isThrottlingError({ name: 'X', $retryable: { throttling: true } })).toBe(true);
    expect(isThrottlingError(named('ValidationException'))).toBe(false);
    for (const name of THROTTLING_ERROR_NAMES) expect(sdkIsThrottling(named(name) as never)).toBe(true);
  });

  it('calls access denied every spelling the services use and HTTP 403, and nothing retryable', () => {
    for (const name of ACCESS_DENIED_ERROR_NAMES) {
      expect(isAccessDeniedError(named(name))).toBe(true);
      expect(isRetryableAwsError(named(name))).toBe(false);
    }
    expect(isAccessDeniedError(named('Forbidden', 403))).toBe(true);
    expect(isAccessDeniedError(named('ThrottlingException'))).toBe(false);
  });

  it('calls transient what the AWS SDK retries as transient: timeouts, 500/502/503/504, no answer', () => {
    const cases = [
      named('TimeoutError', 0),
      named('RequestTimeoutException'),
      named('InternalServerError', 500),
      named('ServiceUnavailable', 503),
      network('ECONNRESET'),
    ];
    for (const error of cases) {
      expect(isTransientError(error)).toBe(true);
      expect(sdkIsTransient(error as never)).toBe(true);
    }
    const notTransient = [named('ValidationException'), named('AbortError', 0), named('NotImplemented', 501)];
    for (const error of notTransient) {
      expect(isTransientError(error)).toBe(false);
      expect(sdkIsTransient(error as never)).toBe(false);
    }
    const conflict = new ConditionalCheckFailedException({
      message: 'failed',
      $metadata: { httpStatusCode: 400 },
    });
    expect(isRetryableAwsError(conflict)).toBe(false);
  });

  it('calls a network failure a request that got no answer, also when the SDK wrapped it', () => {
    for (const code of ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN']) {
      expect(isNetworkError(network(code))).toBe(true);
      expect(sdkIsTransient(network(code) as never)).toBe(true);
    }
    expect(isNetworkError(new Error('wrapped', { cause: network('EHOSTUNREACH') }))).toBe(true);
    expect(isNetworkError(network('ENOENT'))).toBe(false);
  });
});
