/**
 * Key values of the app record table and the opaque page tokens built from them.
 *
 * @module
 */
import { parseAppHandle, ValidationError } from '../specs/index.js';

/** Sort key of an app record item. */
export const APP_SORT_KEY = 'A';
/** Sort key of an idempotency reservation item. */
export const IDEMPOTENCY_SORT_KEY = 'I';

/** Width of the zero-padded `createdAt` prefix of `createdKey` (epoch ms fits until the year 33658). */
const CREATED_AT_WIDTH = 15;

/**
 * `pk` of an app record: the scheduler and app id. The session part of a handle names no different app
 * (TorchX's runner ignores it for status too), so `aws_batch://a/q:n` and `aws_batch://b/q:n` are one record
 * and the API can address apps as `/v1/apps/{scheduler}/{appId}`.
 */
export function appPartitionKey(handle: string): string {
  const { scheduler, appId } = parseAppHandle(handle);
  return `APP#${encodeURIComponent(scheduler)}#${appId}`;
}

/** `pk` of an idempotency reservation; both parts are URI-encoded so `#` in either cannot collide. */
export function idempotencyPartitionKey(owner: string, key: string): string {
  return `IDEM#${encodeURIComponent(owner)}#${encodeURIComponent(key)}`;
}

/**
 * `createdKey`: zero-padded `createdAt`, `#`, handle. Sorts by creation time, then handle.
 *
 * @example
 * ```ts
 * createdSortKey(1700000000000, 'local_cwd://torchx/echo-x1'); // '001700000000000#local_cwd://torchx/echo-x1'
 * ```
 */
export function createdSortKey(createdAt: number, handle: string): string {
  return `${createdAtPrefix(createdAt)}#${handle}`;
}

/** The zero-padded time prefix of `createdKey`; every key created at or after `time` sorts at or above it. */
export function createdAtPrefix(time: number): string {
  return String(Math.max(0, Math.ceil(time))).padStart(CREATED_AT_WIDTH, '0');
}

/** `nativeKey`: `<scheduler>#<nativeName>` (the scheduler URI-encoded so `#` cannot collide). */
export function nativeKeyOf(scheduler: string, nativeName: string): string {
  return `${encodeURIComponent(scheduler)}#${nativeName}`;
}

const CREATED_KEY_PATTERN = new RegExp(`^\\d{${CREATED_AT_WIDTH}}#.+$`, 's');

/** A position in an index: the last key a page ended on. */
export type PageCursor =
  | { index: 'byOwner'; createdKey: string }
  | { index: 'byActive'; updatedAt: number; handle: string };

interface EncodedCursor {
  v: 1;
  /** `o` = byOwner, `a` = byActive. */
  i: 'o' | 'a';
  c?: string;
  u?: number;
  h?: string;
}

/**
 * Encodes a cursor as an opaque, URL-safe token (base64url JSON).
 *
 * @example
 * ```ts
 * const token = encodePageCursor({ index: 'byOwner', createdKey: '001700000000000#h' });
 * decodePageCursor(token, 'byOwner'); // { index: 'byOwner', createdKey: '001700000000000#h' }
 * ```
 */
export function encodePageCursor(cursor: PageCursor): string {
  const encoded: EncodedCursor =
    cursor.index === 'byOwner'
      ? { v: 1, i: 'o', c: cursor.createdKey }
      : { v: 1, i: 'a', u: cursor.updatedAt, h: cursor.handle };
  return Buffer.from(JSON.stringify(encoded), 'utf8').toString('base64url');
}

function invalidToken(): ValidationError {
  return ValidationError.forField(
    'nextToken',
    'is not a token returned by a previous page of this listing; omit it to start from the first page',
  );
}

/**
 * Decodes a token from {@link encodePageCursor} for `index`.
 *
 * @throws ValidationError naming `nextToken` when the token is malformed or belongs to another listing.
 */
export function decodePageCursor(token: string, index: 'byOwner'): { index: 'byOwner'; createdKey: string };
export function decodePageCursor(
  token: string,
  index: 'byActive',
): { index: 'byActive'; updatedAt: number; handle: string };
export function decodePageCursor(token: string, index: PageCursor['index']): PageCursor {
  if (typeof token !== 'string' || token === '' || token.length > 4096 || !/^[A-Za-z0-9_-]+$/.test(token)) {
    throw invalidToken();
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    throw invalidToken();
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw invalidToken();
  const cursor = parsed as Partial<EncodedCursor>;
  if (cursor.v !== 1) throw invalidToken();
  if (index === 'byOwner') {
    if (cursor.i !== 'o' || typeof cursor.c !== 'string' || !CREATED_KEY_PATTERN.test(cursor.c)) {
      throw invalidToken();
    }
    return { index, createdKey: cursor.c };
  }
  if (
    cursor.i !== 'a' ||
    typeof cursor.u !== 'number' ||
    !Number.isSafeInteger(cursor.u) ||
    typeof cursor.h !== 'string' ||
    cursor.h === ''
  ) {
    throw invalidToken();
  }
  return { index, updatedAt: cursor.u, handle: cursor.h };
}

/** The handle at the end of a `createdKey`. */
export function handleOfCreatedKey(createdKey: string): string {
  return createdKey.slice(CREATED_AT_WIDTH + 1);
}
