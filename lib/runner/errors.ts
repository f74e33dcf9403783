/**
 * Errors of the runner layer. Each extends `TxsError`; the HTTP layer maps them by `code`.
 *
 * @module
 */
import { type ApiErrorCode, TxsError } from '../specs/index.js';
import type { IdempotencyRejection } from './store.js';

/** An Idempotency-Key was reused with a different request body. */
export class IdempotencyConflictError extends TxsError {
  readonly code = 'IdempotencyConflict';
  constructor(readonly key: string) {
    super(
      `Idempotency-Key '${key}' was already used for a different request; use a new key for a new request`,
      { issues: [{ path: 'Idempotency-Key', message: 'already used for a different request body' }] },
    );
  }
}

/** Another request with the same Idempotency-Key is still submitting. Retry shortly. */
export class IdempotencyInProgressError extends TxsError {
  readonly code = 'IdempotencyInProgress';
  constructor(readonly key: string) {
    super(`A request with Idempotency-Key '${key}' is still being submitted; retry in a few seconds`);
  }
}

/** `wait()` gave up before the app reached a terminal state. */
export class WaitTimeoutError extends TxsError {
  readonly code = 'WaitTimeout';
  constructor(
    readonly handle: string,
    readonly lastState: string,
    timeoutMs: number,
  ) {
    super(`${handle} is still ${lastState} after ${Math.round(timeoutMs / 1000)} s`);
  }
}

/**
 * The submission of an app may or may not have reached the scheduler (a timeout, a dropped connection, a
 * server error). Its record stays UNSUBMITTED until the reconciler asks the scheduler; a retry with the same
 * Idempotency-Key returns this handle instead of submitting again.
 */
export class SubmissionOutcomeUnknownError extends TxsError {
  readonly code = 'SubmissionOutcomeUnknown';
  constructor(
    readonly handle: string,
    cause: unknown,
  ) {
    super(
      // The backend's own words stay in `cause` (logged server-side), never in the client's message.
      `The submission of ${handle} may not have reached the scheduler (a timeout, a dropped connection or a server error). ` +
        'Its record stays UNSUBMITTED until the reconciler settles it; check it with GET on the app, or retry ' +
        'with the same Idempotency-Key to get this handle back without submitting twice',
      { cause },
    );
  }
}

/**
 * The answer a refused submission got, given again to a request that replays its Idempotency-Key: the same
 * code (so the same HTTP status), message and field issues. Nothing is submitted or written for it.
 */
export class ReplayedRejectionError extends TxsError {
  readonly code: ApiErrorCode;
  /** False when the original error said retrying cannot help; undefined leaves it to its code. */
  readonly retryable: boolean | undefined;
  /** Always true: the answer comes from the stored outcome of an earlier request. */
  readonly replayed = true;

  constructor(rejection: IdempotencyRejection) {
    super(rejection.message, { issues: rejection.issues });
    this.code = rejection.code;
    this.retryable = rejection.retryable;
  }
}
