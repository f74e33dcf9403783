/**
 * DynamoDB item size, computed the way DynamoDB bills and limits it, so oversized records are rejected with a
 * clear error before anything is sent.
 *
 * @module
 */

/** DynamoDB's hard limit on one item (400 KB). */
export const MAX_ITEM_BYTES = 400 * 1024;

const utf8 = new TextEncoder();

/** Bytes of a number: 1 + one per two significant digits (DynamoDB caps at 21). */
function numberSize(value: number): number {
  const digits = String(Math.abs(value))
    .replace(/e[+-]?\d+$/i, '')
    .replace('.', '')
    .replace(/^0+/, '')
    .replace(/0+$/, '');
  return Math.min(21, 1 + Math.ceil(Math.max(1, digits.length) / 2));
}

/**
 * Size in bytes of one attribute value as DynamoDB counts it: strings are their UTF-8 length, numbers about
 * one byte per two digits plus one, booleans and null one byte, lists and maps three bytes plus one byte and
 * the size of each element (and, for maps, each key's name). `undefined` values count nothing (they are not
 * stored).
 *
 * @example
 * ```ts
 * attributeValueSize('abc'); // 3
 * attributeValueSize({ a: 1 }); // 3 + 1 + 1 + 2 = 7
 * ```
 */
export function attributeValueSize(value: unknown): number {
  if (value === null || typeof value === 'boolean') return 1;
  if (typeof value === 'string') return utf8.encode(value).length;
  if (typeof value === 'number') return numberSize(value);
  if (Array.isArray(value)) {
    let size = 3;
    for (const element of value) size += 1 + attributeValueSize(element ?? null);
    return size;
  }
  if (typeof value === 'object') {
    let size = 3;
    for (const [key, element] of Object.entries(value)) {
      if (element === undefined) continue;
      size += 1 + utf8.encode(key).length + attributeValueSize(element);
    }
    return size;
  }
  return 0;
}

/** Size in bytes of a whole item: each attribute's name plus its value. */
export function itemSize(item: Readonly<Record<string, unknown>>): number {
  let size = 0;
  for (const [name, value] of Object.entries(item)) {
    if (value === undefined) continue;
    size += utf8.encode(name).length + attributeValueSize(value);
  }
  return size;
}
