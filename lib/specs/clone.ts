/**
 * A deep copy of JSON-like data (the AppDefs, options and requests this project passes around) that is an
 * order of magnitude cheaper than `structuredClone` on small objects: plain objects and arrays are copied
 * in JavaScript, primitives are returned as they are, anything else (a `Date`, a `Map`, a class instance,
 * a cycle or a very deep nesting) is handed to `structuredClone`.
 *
 * @module
 */

/** Nesting beyond which a value is handed to `structuredClone` whole (which also copes with cycles). */
const MAX_PLAIN_DEPTH = 64;

/** Thrown inside {@link clonePlain} when a value is too deep (or cyclic) for the plain copy. */
class TooDeep extends Error {}

function copy(value: unknown, depth: number): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (depth > MAX_PLAIN_DEPTH) throw new TooDeep();
  if (Array.isArray(value)) {
    const out: unknown[] = new Array(value.length);
    for (let i = 0; i < value.length; i++) if (i in value) out[i] = copy(value[i], depth + 1);
    return out;
  }
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return structuredClone(value);
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const item = copy((value as Record<string, unknown>)[key], depth + 1);
    // An own `__proto__` key (JSON.parse makes them) stays an own property, as structuredClone keeps it.
    if (key === '__proto__')
      Object.defineProperty(out, key, { value: item, enumerable: true, writable: true, configurable: true });
    else out[key] = item;
  }
  return out;
}

/**
 * A deep copy of `value`: equal to `structuredClone(value)` for JSON-like data (plain objects, arrays and
 * primitives, in the same key order), except that an object referenced twice is copied twice.
 *
 * @example
 * ```ts
 * const copy = clonePlain({ args: ['a'], env: { K: 'v' } }); // a new object, new array, new env
 * ```
 */
export function clonePlain<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  try {
    return copy(value, 0) as T;
  } catch (error) {
    if (error instanceof TooDeep || error instanceof RangeError) return structuredClone(value);
    throw error;
  }
}
