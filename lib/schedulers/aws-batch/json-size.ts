/**
 * The size of a request's JSON without writing the JSON out: a cheap upper bound and whether a string in it
 * holds the job name ({@link boundJson}), and, for a request the bound cannot clear, the exact UTF-8 size
 * and how often the job name occurs in it ({@link measureJson}).
 *
 * `JSON.stringify` of a job definition costs several microseconds (half of a dry run's budget), and so does
 * any exact measure, which must look at every character; the bound reads only the lengths of the strings.
 * Both handle the plain data a request is made of (objects, arrays, strings, numbers, booleans, null);
 * anything else is measured by `JSON.stringify` itself.
 *
 * @module
 */

/** Characters `JSON.stringify` writes as they are, one byte each in UTF-8: printable ASCII but `"` and `\`. */
const PLAIN_JSON_TEXT = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** Most UTF-8 bytes one UTF-16 unit of a string takes in JSON (`\u001f`, a lone surrogate `\ud800`). */
const MAX_JSON_BYTES_PER_UNIT = 6;
/** Longest JSON text of a number (`-0.0000012345678901234567`). */
const MAX_JSON_NUMBER_LENGTH = 25;

/** Accumulates an upper bound of a value's JSON size. */
class Bounder {
  bytes = 0;

  value(value: unknown): void {
    if (typeof value === 'string') {
      this.bytes += 2 + MAX_JSON_BYTES_PER_UNIT * value.length;
    } else if (typeof value !== 'object' || value === null) {
      this.bytes += MAX_JSON_NUMBER_LENGTH; // a number, true, false, null (or nothing at all)
    } else if (Array.isArray(value)) {
      this.bytes += 2 + value.length;
      for (const item of value) this.value(item);
    } else {
      const prototype = Object.getPrototypeOf(value);
      if ((prototype !== Object.prototype && prototype !== null) || 'toJSON' in value) {
        this.bytes += MAX_JSON_BYTES_PER_UNIT * (JSON.stringify(value) ?? '').length;
        return;
      }
      this.bytes += 2;
      // for-in (no key array): own keys, and inherited enumerable ones, which only make the bound larger.
      for (const key in value) {
        this.bytes += 4 + MAX_JSON_BYTES_PER_UNIT * key.length; // quotes, colon, comma
        this.value((value as Record<string, unknown>)[key]);
      }
    }
  }
}

/**
 * An upper bound of the UTF-8 size of `JSON.stringify(value)`: each string counted as if every character
 * needed a six-byte escape, each number as the longest. Reads only the lengths of the strings.
 *
 * @example
 * ```ts
 * boundJson({ command: ['echo', 'hi'] }); // 92, at least JSON's 25
 * ```
 */
export function boundJson(value: unknown): number {
  const bounder = new Bounder();
  bounder.value(value);
  return bounder.bytes;
}

/** Size facts of a value's JSON: see {@link measureJson}. */
export interface JsonMeasure {
  /** UTF-8 bytes of `JSON.stringify(value)`. */
  bytes: number;
  /** Non-overlapping occurrences of the needle in that text. */
  occurrences: number;
}

/** Occurrences of `needle` in `text`, counted as `text.split(needle).length - 1` counts them. */
export function occurrencesIn(text: string, needle: string): number {
  let count = 0;
  let at = text.indexOf(needle);
  while (at >= 0) {
    count++;
    at = text.indexOf(needle, at + needle.length);
  }
  return count;
}

/** Accumulates {@link JsonMeasure} over the tokens of one value. */
class Measurer implements JsonMeasure {
  bytes = 0;
  occurrences = 0;

  constructor(private readonly needle: string) {}

  /** A string token (a value or a key), quotes included. */
  text(value: string): void {
    if (PLAIN_JSON_TEXT.test(value)) {
      this.bytes += value.length + 2;
      if (this.needle !== '' && value.length >= this.needle.length) {
        this.occurrences += occurrencesIn(value, this.needle);
      }
    } else {
      this.literal(JSON.stringify(value));
    }
  }

  /** Text exactly as it appears in the JSON. */
  literal(json: string): void {
    this.bytes += Buffer.byteLength(json, 'utf8');
    if (this.needle !== '') this.occurrences += occurrencesIn(json, this.needle);
  }

  /** Any value; false when it writes nothing (undefined, a function: a key holding it is left out). */
  value(value: unknown): boolean {
    switch (typeof value) {
      case 'string':
        this.text(value);
        return true;
      case 'number':
      case 'boolean':
        this.literal(JSON.stringify(value));
        return true;
      case 'object':
        break;
      default: {
        const json = JSON.stringify(value);
        if (json === undefined) return false;
        this.literal(json);
        return true;
      }
    }
    if (value === null) {
      this.literal('null');
      return true;
    }
    if (Array.isArray(value)) {
      this.bytes += value.length === 0 ? 2 : value.length + 1; // brackets and commas
      for (const item of value) if (!this.value(item)) this.literal('null'); // as JSON.stringify writes it
      return true;
    }
    const prototype = Object.getPrototypeOf(value);
    if ((prototype !== Object.prototype && prototype !== null) || 'toJSON' in value) {
      this.literal(JSON.stringify(value));
      return true;
    }
    let members = 0;
    for (const key of Object.keys(value)) {
      const before = this.bytes;
      const occurrences = this.occurrences;
      this.text(key);
      if (this.value((value as Record<string, unknown>)[key])) {
        this.bytes += 1; // the colon
        members++;
      } else {
        this.bytes = before;
        this.occurrences = occurrences;
      }
    }
    this.bytes += members === 0 ? 2 : members + 1; // braces and commas
    return true;
  }
}

/**
 * The UTF-8 size of `JSON.stringify(value)` and the number of times `needle` occurs in it (as
 * `json.split(needle).length - 1` counts), without building the text. The count is exact for a needle of
 * characters JSON writes as they are (letters, digits, `-`, `_`: a job name), since such a needle never
 * spans two tokens.
 *
 * @example
 * ```ts
 * measureJson({ jobName: 'train-k3x9', tags: { app: 'train' } }, 'train-k3x9'); // { bytes: 44, occurrences: 1 }
 * ```
 */
export function measureJson(value: unknown, needle = ''): JsonMeasure {
  const measurer = new Measurer(needle);
  if (!measurer.value(value)) return { bytes: 0, occurrences: 0 };
  return { bytes: measurer.bytes, occurrences: measurer.occurrences };
}
