/**
 * Canonical JSON (object keys sorted), which names a shared job definition by the hash of its content
 * ({@link canonicalJson}, {@link contentHash}), written fast for the shapes the translation builds.
 *
 * Sorting each object's keys is most of the cost of a canonical form (a 5-role job definition has ~70
 * objects). A {@link CanonicalShape} gives an object's keys already sorted, once per process; the writer
 * uses it only when the object has exactly those keys (counted), and sorts them itself otherwise, so a shape
 * can make the writing faster but never change what is written.
 *
 * @module
 */
import { hash } from 'node:crypto';

/**
 * Characters `JSON.stringify` may escape: `"`, `\`, control characters (it escapes U+0000–U+001F; U+007F–U+009F
 * match too and are merely written by `JSON.stringify` itself) and lone surrogates.
 */
const ESCAPED_JSON_TEXT = /["\\\p{Cc}\p{Cs}]/u;

/** `JSON.stringify(text)`, without the call for text that needs no escaping (nearly all of it). */
export function quoteJson(text: string): string {
  return ESCAPED_JSON_TEXT.test(text) ? JSON.stringify(text) : `"${text}"`;
}

/** What the canonical writer may know about a value: see {@link canonicalShape}. */
export interface CanonicalShape {
  /** The object's keys, sorted, each with its `"key":` prefix. */
  readonly keys: readonly {
    readonly key: string;
    readonly prefix: string;
    readonly shape?: CanonicalShape;
  }[];
  /** The shape of each item, when the value is an array. */
  readonly items?: CanonicalShape;
  /**
   * Writes an object of this shape itself (for a hot shape: fixed keys read directly, no loop over them);
   * returns undefined for an object it does not recognise, which is then written the general way.
   */
  readonly writer?: (value: object) => string | undefined;
}

/** A {@link CanonicalShape} member: a nested shape, or `null` for a value written without one. */
export type CanonicalMember = CanonicalShape | null;

/**
 * The shape of an object with the given keys (in any order; they are sorted here, once), or of an array of
 * such objects (`{ items: shape }`).
 *
 * @example
 * ```ts
 * const pair = canonicalShape({ name: null, value: null });
 * canonicalJson({ value: 'v', name: 'n' }, { shape: pair }); // '{"name":"n","value":"v"}'
 * ```
 */
export function canonicalShape(members: Readonly<Record<string, CanonicalMember>>): CanonicalShape {
  const keys = Object.keys(members)
    .sort()
    .map((key) => {
      const shape = members[key];
      return shape ? { key, prefix: `${quoteJson(key)}:`, shape } : { key, prefix: `${quoteJson(key)}:` };
    });
  return { keys };
}

/** `shape` with its own writer for its objects (see {@link CanonicalShape.writer}). */
export function withCanonicalWriter(
  shape: CanonicalShape,
  writer: (value: object) => string | undefined,
): CanonicalShape {
  return { ...shape, writer };
}

/** The shape of an array whose items have `items`' shape. */
export function canonicalArrayShape(items: CanonicalShape): CanonicalShape {
  return { keys: [], items };
}

/** Own enumerable keys of `value`, sorted (as `Object.keys(value).sort()`, by insertion). */
function sortedKeys(value: object): string[] {
  const keys = Object.keys(value);
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i] as string;
    let j = i;
    while (j > 0 && (keys[j - 1] as string) > key) {
      keys[j] = keys[j - 1] as string;
      j--;
    }
    keys[j] = key;
  }
  return keys;
}

/** An object written through its shape; undefined when the object has other keys than the shape's. */
function writeShaped(
  value: Record<string, unknown>,
  shape: CanonicalShape,
  omitKey: string | undefined,
): string | undefined {
  let count = 0;
  for (const _key in value) count++;
  let seen = 0;
  let out = '{';
  for (const member of shape.keys) {
    const item = value[member.key];
    if (item === undefined) {
      if (Object.hasOwn(value, member.key)) seen++;
      continue;
    }
    seen++;
    if (member.key === omitKey) continue;
    if (out.length > 1) out += ',';
    out += member.prefix + write(item, member.shape, undefined);
  }
  return seen === count ? `${out}}` : undefined;
}

function write(value: unknown, shape: CanonicalShape | undefined, omitKey: string | undefined): string {
  if (typeof value === 'string') return quoteJson(value);
  // What JSON.stringify writes for them, without the call.
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : 'null';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value !== 'object' || value === null) return JSON.stringify(value);
  if (Array.isArray(value)) {
    const items = shape?.items;
    let out = '[';
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out += ',';
      // An item JSON cannot write (undefined, a function) contributes nothing, as `join` writes it.
      out += write(value[i], items, undefined) ?? '';
    }
    return `${out}]`;
  }
  if (shape?.writer !== undefined) {
    const written = shape.writer(value);
    if (written !== undefined) return written;
  }
  const record = value as Record<string, unknown>;
  if (shape !== undefined && shape.keys.length > 0) {
    const shaped = writeShaped(record, shape, omitKey);
    if (shaped !== undefined) return shaped;
  }
  let out = '{';
  for (const key of sortedKeys(record)) {
    const item = record[key];
    if (item === undefined || key === omitKey) continue;
    if (out.length > 1) out += ',';
    out += `${quoteJson(key)}:${write(item, shape?.keys.find((m) => m.key === key)?.shape, undefined)}`;
  }
  return `${out}}`;
}

/** Options of {@link canonicalJson}. */
export interface CanonicalJsonOptions {
  /** A key of the top-level object to leave out (a job definition's own name). */
  omitKey?: string;
  /** The value's shape, to write it without sorting keys at run time. */
  shape?: CanonicalShape;
}

/**
 * Canonical JSON: object keys sorted (by UTF-16 code units), members holding `undefined` left out, no
 * whitespace; equal content always gives the same text, whatever order its keys were set in.
 *
 * @example
 * ```ts
 * canonicalJson({ b: 1, a: [true, 'x'] }); // '{"a":[true,"x"],"b":1}'
 * ```
 */
export function canonicalJson(value: unknown, options: CanonicalJsonOptions = {}): string {
  return write(value, options.shape, options.omitKey);
}

/**
 * The first `length` hex characters of the SHA-256 of `canonical` (UTF-8).
 *
 * @example
 * ```ts
 * contentHash(canonicalJson(content), 12); // e.g. '3f2a9c0d11be'
 * ```
 */
export function contentHash(canonical: string, length: number): string {
  // One-shot `crypto.hash` (Node 20.12+): no Hash object per call.
  return hash('sha256', canonical, 'hex').slice(0, length);
}
