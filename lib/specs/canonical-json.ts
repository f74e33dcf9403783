/**
 * Canonical JSON: one text for one content, whatever order its keys were set in. It names a shared AWS
 * Batch job definition by its hash, gives a record its revision and an idempotent request its hash.
 *
 * @module
 */

/** Text `JSON.stringify` escapes: `"`, `\`, control characters, lone surrogates. */
const ESCAPED = /["\\\p{Cc}\p{Cs}]/u;

/** `JSON.stringify(text)`, without the call for text that needs no escaping (nearly all). */
const quote = (text: string): string => (ESCAPED.test(text) ? JSON.stringify(text) : `"${text}"`);

/** `value` as `JSON.stringify` writes plain data, keys sorted; undefined where it writes nothing. */
function write(value: unknown): string | undefined {
  if (typeof value === 'string') return quote(value);
  if (typeof value !== 'object' || value === null) return JSON.stringify(value);
  let out = '';
  if (Array.isArray(value)) {
    for (const item of value) out += `${out === '' ? '' : ','}${write(item) ?? 'null'}`;
    return `[${out}]`;
  }
  for (const key of Object.keys(value).sort()) {
    const json = write((value as Record<string, unknown>)[key]);
    if (json !== undefined) out += `${out === '' ? '' : ','}${quote(key)}:${json}`;
  }
  return `{${out}}`;
}

/**
 * Canonical JSON of plain data: what `JSON.stringify(value)` writes, with every object's keys sorted (by
 * UTF-16 code units, integer-like keys too). Members holding `undefined` are left out and `undefined` array
 * items are `null`, as `JSON.stringify` writes them; `undefined` itself is `null`. `toJSON` is not called.
 *
 * @example
 * ```ts
 * canonicalJson({ b: 1, a: [true, 'x'], c: undefined }); // '{"a":[true,"x"],"b":1}'
 * ```
 */
export function canonicalJson(value: unknown): string {
  return write(value) ?? 'null';
}
