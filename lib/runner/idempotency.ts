/**
 * The Idempotency-Key protocol of `run`, apart from the Runner and from DynamoDB (as Powertools splits its
 * idempotency package into a handler and a persistence layer): {@link IdempotencyHandler} reserves the key,
 * runs the submission, and completes or releases the reservation; it answers a replay with the earlier app or
 * the earlier refusal, waits for a request still in progress, and takes over the reservation of one that
 * crashed. Persistence is the {@link AppRecordStore}'s `idempotency` (`reserve`, `complete`, `release`; lib/store
 * implements them on DynamoDB).
 *
 * @module
 */
import { createHash } from 'node:crypto';
import {
  type AppHandle,
  type AppRecord,
  backoffDelay,
  type Cfg,
  canonicalJson,
  SECRET_CFG_KEYS,
  type TxsError,
} from '../specs/index.js';
import {
  IdempotencyConflictError,
  IdempotencyInProgressError,
  ReplayedRejectionError,
  SubmissionOutcomeUnknownError,
} from './errors.js';
import type { IdempotencyKeyStore, IdempotencyRejection, RecordStore } from './store.js';

/**
 * `cfg` as the idempotency hash sees it: options that may hold secrets (the caller's `env`) count by their
 * names only, so no digest of a secret is stored with the idempotency key.
 */
export function hashableCfg(cfg: Readonly<Cfg>): Cfg {
  const out: Cfg = { ...cfg };
  for (const key of SECRET_CFG_KEYS) {
    const value = out[key];
    if (value !== null && value !== undefined && typeof value === 'object' && !Array.isArray(value)) {
      out[key] = Object.keys(value).sort();
    }
  }
  return out;
}

/** Hash of a request's content, to recognise an Idempotency-Key reused for a different request. */
export function requestHash(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex');
}

/** What a run returns (the Runner's `run`), with or without an Idempotency-Key. */
export interface RunResult {
  handle: AppHandle;
  record: AppRecord;
  /** False when an idempotent retry returned an earlier submission. */
  created: boolean;
}

/** One request's submission under an Idempotency-Key, and what the protocol needs from the Runner for it. */
export interface IdempotentSubmission {
  owner: string;
  key: string;
  /** {@link requestHash} of the request (owner included). */
  requestHash: string;
  /** The handle this request submits under; it holds the reservation while it runs. */
  handle: AppHandle;
  /** Epoch ms the reservation's lease ends (when this request's process is stopped at the latest). */
  leaseUntil: number;
  /** Epoch ms until which a duplicate waits for the request holding the key. */
  waitUntil: number;
  /**
   * Submits under {@link handle}. When the scheduler refused the submission, calls `onRejected` with the
   * refusal (after the record is marked FAILED) before rethrowing it.
   */
  submit(onRejected: (error: TxsError) => Promise<void>): Promise<RunResult>;
  /**
   * The record of an earlier holder whose reservation this request took over, when it reached the scheduler;
   * undefined when it never did (the caller then submits its own).
   */
  settleAbandoned(earlier: AppHandle): Promise<AppRecord | undefined>;
  /** The answer kept for a refused submission, replayed to every later request with the key. */
  rejectionOf(error: TxsError): IdempotencyRejection;
}

/** How the handler is built: the store (persistence), the clock and the wait between polls. */
export interface IdempotencyHandlerOptions {
  store: { records: Pick<RecordStore, 'get'>; idempotency: IdempotencyKeyStore };
  now: () => number;
  sleep: (ms: number) => Promise<void>;
}

/**
 * Runs submissions once per Idempotency-Key (see the module's description).
 *
 * @example
 * ```ts
 * const idempotency = new IdempotencyHandler({ store, now: Date.now, sleep });
 * const result = await idempotency.handle({ owner, key, requestHash, handle, leaseUntil, waitUntil, submit, settleAbandoned, rejectionOf });
 * ```
 */
export class IdempotencyHandler {
  constructor(private readonly options: IdempotencyHandlerOptions) {}

  /**
   * Submits once per key. The reservation belongs to this request (its handle is the holder, with a lease
   * that ends when the request's function is stopped):
   * - the same request retried after a lost response gets the handle; after a refusal, the same error;
   * - after a crash, a retry takes the reservation over once the lease has ended, and returns the earlier
   *   attempt's app if the scheduler knows it (or a reconciler settled it), else submits its own;
   * - a request still holding the key is waited for until `waitUntil`, then {@link IdempotencyInProgressError};
   * - the same key with a different request is {@link IdempotencyConflictError}.
   */
  async handle(submission: IdempotentSubmission): Promise<RunResult> {
    const replayed = await this.reserve(submission);
    if (replayed) return replayed;
    const { store } = this.options;
    const { owner, key, handle } = submission;
    let result: RunResult;
    let rejected = false;
    try {
      result = await submission.submit(async (error) => {
        // The scheduler refused it: a completed outcome. Bind the key to the FAILED record and the answer,
        // so a replay gets the same answer and leaves no second record. If this write fails, a retry
        // after the lease takes the reservation over and finds this FAILED record.
        rejected = true;
        await store.idempotency
          .complete(owner, key, handle, submission.rejectionOf(error))
          .catch(() => undefined);
      });
    } catch (error) {
      if (error instanceof SubmissionOutcomeUnknownError) {
        // The job may exist: bind the key to its record so a retry cannot submit it a second time. If this
        // write fails, the reservation still names this handle as holder, and a retry after the lease finds
        // the job through the scheduler: the caller must see the outcome-unknown error with the handle.
        await store.idempotency.complete(owner, key, error.handle).catch(() => undefined);
      } else if (!rejected) {
        // Nothing was written (the record itself could not be created): free the key for a retry.
        await store.idempotency.release(owner, key).catch(() => undefined);
      }
      throw error;
    }
    // The job was accepted: never release the key now. If completing it fails, the reservation still names
    // this handle as holder, so a retry finds this app (at once when its record is past UNSUBMITTED, else
    // through the scheduler after the lease); answering an error here would only invite a retry.
    await store.idempotency.complete(owner, key, result.handle).catch(() => undefined);
    return result;
  }

  /**
   * Reserves the key for this request: undefined once it holds the reservation (the caller submits), or the
   * earlier request's result to answer with.
   */
  private async reserve(submission: IdempotentSubmission): Promise<RunResult | undefined> {
    const { store, now, sleep } = this.options;
    const { owner, key, handle } = submission;
    const lease = { holder: handle, until: submission.leaseUntil };
    let checkedHolder = false;
    for (let poll = 0; ; poll++) {
      const reservation = await store.idempotency.reserve(owner, key, submission.requestHash, now(), lease);
      if (reservation.reserved) {
        const earlier = reservation.takenOverFrom;
        const settled = earlier === undefined ? undefined : await submission.settleAbandoned(earlier);
        if (!settled) return undefined;
        await store.idempotency.complete(owner, key, settled.handle);
        return { handle: settled.handle, record: settled, created: false };
      }
      if (reservation.requestHash !== submission.requestHash) throw new IdempotencyConflictError(key);
      // A refused submission's answer is replayed as it was: same error, nothing submitted or written.
      if (reservation.rejection !== undefined) throw new ReplayedRejectionError(reservation.rejection);
      if (reservation.handle !== undefined) {
        const record = await store.records.get(reservation.handle);
        if (record) return { handle: record.handle, record, created: false };
      }
      if (!checkedHolder && reservation.holder !== undefined) {
        // A holder whose record a reconciler already moved past UNSUBMITTED was submitted: return it.
        checkedHolder = true;
        const record = await store.records.get(reservation.holder);
        if (record && record.state !== 'UNSUBMITTED') {
          return { handle: record.handle, record, created: false };
        }
      }
      if (now() >= submission.waitUntil) throw new IdempotencyInProgressError(key);
      await sleep(backoffDelay(poll, { baseMs: 50, capMs: 1_000 }));
    }
  }
}
