/**
 * The app record store the runner writes to. The runner depends on this interface only; `lib/store`
 * implements it over DynamoDB, and tests use the same DynamoDB implementation against dynalite.
 *
 * @module
 */
import type {
  ApiErrorCode,
  AppHandle,
  AppRecord,
  AppState,
  AppStateTransition,
  FieldIssue,
  NewAppRecord,
  StateReason,
} from '../specs/index.js';

/**
 * `ListAppsQuery.owner` for every owner's apps (deployment admins only). A symbol, so that no owner name a
 * request can carry means "everyone".
 */
export const ALL_OWNERS: unique symbol = Symbol('all owners');

/** Filters and paging for {@link AppRecordStore.list}. Results are newest first. */
export interface ListAppsQuery {
  /** Only this owner's apps (the API passes the caller), or {@link ALL_OWNERS}. */
  owner: string | typeof ALL_OWNERS;
  scheduler?: string;
  /** Any of these states. */
  states?: readonly AppState[];
  session?: string;
  /** Only apps created at or after this time (epoch ms). */
  since?: number;
  /** Page size (1–100, default 50). */
  limit?: number;
  /** Opaque cursor from the previous page. */
  nextToken?: string;
}

/** Filters of {@link AppRecordStore.countByState}: a listing's, without states and paging. */
export type CountAppsQuery = Omit<ListAppsQuery, 'states' | 'limit' | 'nextToken'>;

/** Records read by one {@link AppRecordStore.countByState} at most: past it, the counts are a lower bound. */
export const APP_COUNT_CAP = 10_000;

/** How many of an owner's apps are in each state, read from at most a capped number of records. */
export interface AppCounts {
  /** Apps per state; states with none are absent. */
  counts: Partial<Record<AppState, number>>;
  /** The apps counted (the sum of `counts`). */
  counted: number;
  /** False when the cap stopped the count: more apps may match than were counted. */
  complete: boolean;
}

/** One page of records. */
export interface ListAppsPage {
  records: AppRecord[];
  nextToken?: string;
}

/** What happened to a transition. */
export type TransitionOutcome =
  | {
      applied: true;
      previous: AppState;
      /** The record's state reason before this transition (absent: it had none). */
      previousStateReason?: StateReason;
      record: AppRecord;
      /** The record version this transition wrote (the change's event id is `<handle>#<version>`). */
      version: number;
    }
  | { applied: false; reason: 'duplicate' | 'stale' | 'terminal' | 'missing'; record?: AppRecord };

/**
 * The request holding a reservation: the handle it will submit under, and when its lease ends (epoch ms; no
 * later than the moment its function is stopped, so a holder past its lease has crashed or timed out).
 */
export interface IdempotencyLease {
  holder: AppHandle;
  until: number;
}

/**
 * The answer a submission got when the scheduler refused it: the error's code, message and field issues,
 * and whether sending it again may help. Stored with the completed reservation, so a replay of the same key
 * gets the same answer and writes nothing (a completed-with-error outcome, as in Powertools' idempotency).
 */
export interface IdempotencyRejection {
  code: ApiErrorCode;
  message: string;
  issues: FieldIssue[];
  /** False when the error itself said retrying cannot help (a `BackendError` AWS rejected). */
  retryable?: boolean;
}

/** Result of reserving an idempotency key. */
export type IdempotencyReservation =
  | {
      reserved: true;
      /** Set when this call took over an abandoned reservation (its lease had ended): the earlier holder. */
      takenOverFrom?: AppHandle;
    }
  | {
      reserved: false;
      /** The submitted app, once the reservation is completed. */
      handle?: AppHandle;
      /** Set when the submission under `handle` was refused: the answer it got. */
      rejection?: IdempotencyRejection;
      requestHash: string;
      reservedAt: number;
      /** The request that holds the (uncompleted) reservation, and its lease. */
      holder?: AppHandle;
      leaseExpiresAt?: number;
    };

/** An app's record: create it, read it, move it forward, mark a cancel. */
export interface RecordStore {
  /**
   * Creates the record unless one exists for the handle.
   *
   * @returns the stored record and whether this call created it.
   */
  create(record: NewAppRecord): Promise<{ record: AppRecord; created: boolean }>;

  /** The record for a handle, or undefined. Strongly consistent. */
  get(handle: AppHandle): Promise<AppRecord | undefined>;

  /**
   * Applies a transition if it moves the app forward; a no-op otherwise. `current` is a record the caller
   * just read from this store: implementations may start from it instead of reading again (a hint only).
   */
  transition(
    handle: AppHandle,
    transition: AppStateTransition,
    current?: AppRecord,
  ): Promise<TransitionOutcome>;

  /** Records that a cancel was requested (epoch ms). */
  markCancelRequested(handle: AppHandle, at: number): Promise<void>;
}

/** Records found by something other than their handle: an owner's listing and counts, a native name, the active. */
export interface RecordQueries {
  /**
   * The record of the app the scheduler knows by `nativeName` (Batch job name, SageMaker training job
   * name, local app id), or undefined. Used to route state-change events.
   */
  findByNativeName(scheduler: string, nativeName: string): Promise<AppRecord | undefined>;

  /** Lists an owner's records, newest first, with filters. */
  list(query: ListAppsQuery): Promise<ListAppsPage>;

  /**
   * Counts an owner's records per state with a listing's filters, reading at most `cap` records (default
   * {@link APP_COUNT_CAP}); `complete` is false when records were left unread.
   */
  countByState(query: CountAppsQuery, cap?: number): Promise<AppCounts>;

  /** Non-terminal records of a scheduler (for the reconciler), oldest update first. */
  listActive(scheduler: string, limit?: number, nextToken?: string): Promise<ListAppsPage>;
}

/** Idempotency-Key reservations: one submission per key and owner. */
export interface IdempotencyKeyStore {
  /**
   * Reserves `key` for `owner` before anything is submitted. Exactly one concurrent caller gets
   * `reserved: true`; the others see the reservation (and the handle once it is completed). With a `lease`,
   * the reservation belongs to `lease.holder`: the holder's own retried write is recognised as its own, and a
   * request with the same `requestHash` takes over an uncompleted reservation once its lease has ended.
   */
  reserve(
    owner: string,
    key: string,
    requestHash: string,
    now: number,
    lease?: IdempotencyLease,
  ): Promise<IdempotencyReservation>;

  /**
   * Attaches the submitted app's handle to a reservation, and with `rejection` the answer its refused
   * submission got (replayed to every later request with the key).
   */
  complete(owner: string, key: string, handle: AppHandle, rejection?: IdempotencyRejection): Promise<void>;

  /** Drops a reservation whose submission failed, so a retry can try again. */
  release(owner: string, key: string): Promise<void>;
}

/**
 * Persistence of app records. Every write is conditional: records are created once, transitions only move
 * forward (see `decideTransition` in lib/specs), and idempotency keys are reserved before anything is
 * submitted.
 */
export interface AppRecordStore {
  readonly records: RecordStore;
  readonly queries: RecordQueries;
  readonly idempotency: IdempotencyKeyStore;
}

/**
 * `store` with some of its record verbs replaced by `overrides` (the others are `store.records`' own): how a
 * decorator wraps them (the local record cache's reads, the record watch's and the local outbox's writes),
 * keeping the queries and the idempotency keys of `store`.
 */
export function withRecords(store: AppRecordStore, overrides: Partial<RecordStore>): AppRecordStore {
  const records = Object.assign(Object.create(store.records) as RecordStore, overrides);
  return { records, queries: store.queries, idempotency: store.idempotency };
}
