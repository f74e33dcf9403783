/**
 * Validation of what the store is asked to write or read: text and time fields, idempotency keys, page
 * sizes. Failures collect {@link FieldIssue}s and throw one `ValidationError` naming every field.
 *
 * @module
 */
import {
  type AppRecord,
  type FieldIssue,
  isAppState,
  parseAppHandle,
  ValidationError,
} from '../specs/index.js';
import { attributeValueSize } from './item-size.js';

/** Page size of `list` and `listActive` when none is given. */
export const DEFAULT_PAGE_SIZE = 50;
/** Largest page size. */
export const MAX_PAGE_SIZE = 100;
/** Longest idempotency key. */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;
/** Longest handle in bytes (it is part of an index sort key, which DynamoDB limits to 1024 bytes). */
export const MAX_HANDLE_BYTES = 1000;

/** Adds an issue unless `value` is a non-empty string of at most `maxBytes` UTF-8 bytes. */
export function requireText(issues: FieldIssue[], path: string, value: unknown, maxBytes: number): void {
  if (typeof value !== 'string' || value === '') {
    issues.push({ path, message: 'must be a non-empty string' });
  } else if (Buffer.byteLength(value, 'utf8') > maxBytes) {
    issues.push({ path, message: `must be at most ${maxBytes} bytes` });
  }
}

/** Adds an issue unless `value` is a finite, non-negative epoch-ms time (an integer when `integer`). */
export function requireTime(issues: FieldIssue[], path: string, value: unknown, integer: boolean): void {
  if (
    typeof value !== 'number' ||
    !Number.isFinite(value) ||
    value < 0 ||
    (integer && !Number.isInteger(value))
  ) {
    issues.push({ path, message: `must be a non-negative ${integer ? 'integer' : 'number'} (epoch ms)` });
  }
}

/** Throws one `ValidationError` naming every issue, if there are any. */
export function throwIfIssues(what: string, issues: readonly FieldIssue[]): void {
  if (issues.length === 0) return;
  const detail = issues.map((issue) => `${issue.path}: ${issue.message}`).join('; ');
  throw new ValidationError(`Invalid ${what}: ${detail}`, issues);
}

/** Adds an issue unless `key` is an idempotency key of 1 to {@link MAX_IDEMPOTENCY_KEY_LENGTH} characters. */
export function validateIdempotencyKey(issues: FieldIssue[], key: unknown): void {
  if (typeof key !== 'string' || key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    issues.push({
      path: 'idempotencyKey',
      message: `must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`,
    });
  }
}

/** The page size to use: `limit`, or {@link DEFAULT_PAGE_SIZE}; adds an issue when it is out of range. */
export function pageSize(issues: FieldIssue[], limit: number | undefined): number {
  if (limit === undefined) return DEFAULT_PAGE_SIZE;
  if (!(Number.isInteger(limit) && limit >= 1 && limit <= MAX_PAGE_SIZE)) {
    issues.push({ path: 'limit', message: `must be an integer from 1 to ${MAX_PAGE_SIZE}` });
  }
  return limit;
}

/**
 * Largest record accepted by `create` (300 KB): DynamoDB items are limited to 400 KB, and the rest is kept
 * for the status history, replica statuses and reasons that transitions add.
 */
export const MAX_NEW_RECORD_BYTES = 300 * 1024;

/**
 * Checks a new record before it is created: index keys non-empty and bounded, the handle names the record's
 * scheduler, and the item (`itemBytes`, computed only when the fields are valid) fits
 * {@link MAX_NEW_RECORD_BYTES}.
 *
 * @throws ValidationError naming the field (`app` or `cfg` when the record is too large).
 */
export function validateNewRecord(record: AppRecord, itemBytes: () => number): void {
  const issues: FieldIssue[] = [];
  requireText(issues, 'handle', record.handle, MAX_HANDLE_BYTES);
  requireText(issues, 'scheduler', record.scheduler, 255);
  requireText(issues, 'owner', record.owner, 1024);
  requireText(issues, 'nativeName', record.nativeName, 1024);
  requireTime(issues, 'createdAt', record.createdAt, true);
  if (!isAppState(record.state)) issues.push({ path: 'state', message: 'must be an AppState' });
  if (typeof record.handle === 'string' && record.handle !== '') {
    try {
      if (parseAppHandle(record.handle).scheduler !== record.scheduler) {
        issues.push({
          path: 'handle',
          message: `must start with the record's scheduler '${record.scheduler}://'`,
        });
      }
    } catch (error) {
      issues.push({ path: 'handle', message: error instanceof Error ? error.message : String(error) });
    }
  }
  throwIfIssues('app record', issues);
  const size = itemBytes();
  if (size > MAX_NEW_RECORD_BYTES) {
    const field = attributeValueSize(record.app) >= attributeValueSize(record.cfg) ? 'app' : 'cfg';
    const message =
      `the app record would be ${Math.ceil(size / 1024)} KB; at most ${MAX_NEW_RECORD_BYTES / 1024} KB can be ` +
      `stored (DynamoDB items are limited to 400 KB, the rest is kept for status history). Shrink ${field}: ` +
      'move large env values, args or metadata into a file the job reads (S3 or the image)';
    throw new ValidationError(`${field}: ${message}`, [{ path: field, message }]);
  }
}
