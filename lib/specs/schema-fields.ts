/**
 * The rules every request body shares, whatever its schema: the field types of `zod/mini` that names, texts
 * and map keys are built from (well-formed Unicode, no unsafe characters, bounded lengths), the structural
 * checks that run before any schema (prototype keys, depth, numbers the app record can hold), and the
 * translation of zod's issues into field issues that say what to fix.
 *
 * @module
 */
import { en } from 'zod/locales';
import * as z from 'zod/mini';
import { type FieldIssue, ValidationError } from './errors.js';
import { MAX_NAME_LENGTH, MAX_NUMBER_MAGNITUDE, MAX_STRING_LENGTH, MIN_NUMBER_MAGNITUDE } from './limits.js';
import { escapeUnsafeCharacters, hasUnsafeNameCharacters, UNSAFE_NAME_MESSAGE } from './names.js';

// Only the English locale: `z.locales.en()` would pull every locale (~250 KB) into each bundle.
z.config(en());

/** Keys that could pollute prototypes: refused anywhere in a body. */
export const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

// Every string must be well-formed Unicode (JSON escapes can carry lone surrogates, which AWS would reject
// only after the record is written).
export const wellFormed = z.refine<string>(
  (v) => v.isWellFormed(),
  'contains invalid Unicode (a lone surrogate)',
);
export const safeText = z.refine<string>((v) => !hasUnsafeNameCharacters(v), UNSAFE_NAME_MESSAGE);
/** A name: 1 to MAX_NAME_LENGTH well-formed characters, none unsafe. */
export const name = z
  .string()
  .check(z.minLength(1, 'must not be empty'), z.maxLength(MAX_NAME_LENGTH), wellFormed, safeText);
/** Free text: up to MAX_STRING_LENGTH well-formed characters. */
export const text = z.string().check(z.maxLength(MAX_STRING_LENGTH), wellFormed);
/** A map key: a name that is not a prototype key. */
export const safeKey = z.string().check(
  z.minLength(1, 'keys must not be empty'),
  z.maxLength(MAX_NAME_LENGTH),
  wellFormed,
  safeText,
  z.refine((k) => !FORBIDDEN_KEYS.has(k), 'this key name is not allowed'),
);
/** A map of names to texts (env, metadata). */
export const stringMap = z.record(safeKey, text);

const CAMEL_HINTS: Readonly<Record<string, string>> = {
  num_replicas: 'numReplicas',
  min_replicas: 'minReplicas',
  max_retries: 'maxRetries',
  retry_policy: 'retryPolicy',
  port_map: 'portMap',
  mem_mb: 'memMB',
  memMb: 'memMB',
  mem: 'memMB',
  src_path: 'srcPath',
  dst_path: 'dstPath',
  read_only: 'readOnly',
  readonly: 'readOnly',
  cmd: 'entrypoint',
  command: 'entrypoint',
  replicas: 'numReplicas',
};

function joinPath(base: string, path: readonly PropertyKey[]): string {
  return [base, ...path.map((p) => escapeUnsafeCharacters(String(p)))].filter((p) => p.length > 0).join('.');
}

function describeReceived(input: unknown): string {
  if (input === undefined) return 'nothing';
  if (input === null) return 'null';
  if (Array.isArray(input)) return 'a list';
  return typeof input === 'object' ? 'an object' : `${typeof input} ${JSON.stringify(input).slice(0, 40)}`;
}

/** Turns zod issues into field issues whose messages say what to fix. */
export function toFieldIssues(issues: readonly z.core.$ZodIssue[], base: string): FieldIssue[] {
  const out: FieldIssue[] = [];
  for (const issue of issues) {
    const path = joinPath(base, issue.path);
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        const hint = CAMEL_HINTS[key];
        out.push({
          path: joinPath(path, [key]),
          message: hint
            ? `unknown field '${key}'; did you mean '${hint}'?`
            : `unknown field '${key}'; remove it`,
        });
      }
    } else if (issue.code === 'invalid_key') {
      // A map key failed its rule: say which rule (the nested issue), not zod's generic "Invalid key".
      out.push({ path, message: issue.issues[0]?.message ?? issue.message });
    } else if (issue.code === 'invalid_type' && issue.input === undefined) {
      out.push({ path, message: `is required (expected ${issue.expected})` });
    } else if (issue.code === 'invalid_type') {
      out.push({
        path,
        message: `must be ${issue.expected === 'int' ? 'an integer' : `a ${issue.expected}`}, got ${describeReceived(issue.input)}`,
      });
    } else if (issue.code === 'invalid_union' && path.endsWith('.resource')) {
      const objectBranch = issue.errors[1];
      if (
        issue.input !== null &&
        typeof issue.input === 'object' &&
        !Array.isArray(issue.input) &&
        objectBranch
      ) {
        // An object was given: report what is wrong inside it (e.g. resource.memMB), not the union.
        out.push(...toFieldIssues(objectBranch, path));
      } else {
        out.push({
          path,
          message: 'must be a named resource such as "aws_g5.xlarge" or an object {cpu, gpu, memMB}',
        });
      }
    } else if (
      issue.code === 'invalid_union' &&
      'note' in issue &&
      issue.note === 'No matching discriminator'
    ) {
      out.push({ path, message: 'must be one of "bind", "volume" or "device"' });
    } else {
      out.push({ path, message: issue.message });
    }
  }
  return out;
}

/** Deepest nesting of any request body. */
export const MAX_BODY_DEPTH = 32;

/**
 * True for a number every part of the system can keep: finite, and 0 or of a magnitude DynamoDB stores
 * ({@link MIN_NUMBER_MAGNITUDE} up to {@link MAX_NUMBER_MAGNITUDE}). JSON numbers carry at most 17
 * significant digits here, within DynamoDB's 38.
 *
 * @example
 * ```ts
 * isStorableNumber(0.5); // true
 * isStorableNumber(1e300); // false
 * ```
 */
export function isStorableNumber(value: number): boolean {
  const magnitude = Math.abs(value);
  return (
    value === 0 ||
    (Number.isFinite(value) && magnitude >= MIN_NUMBER_MAGNITUDE && magnitude < MAX_NUMBER_MAGNITUDE)
  );
}

const UNSTORABLE_NUMBER_MESSAGE =
  `must be 0 or a number of magnitude ${MIN_NUMBER_MAGNITUDE} to ${MAX_NUMBER_MAGNITUDE} ` +
  '(what the app record can hold); give a smaller number, or the value as a string';

/**
 * Rejects keys that could pollute prototypes (`__proto__`, `constructor`, `prototype`) anywhere in the input,
 * input nested deeper than {@link MAX_BODY_DEPTH}, and numbers the app record cannot hold
 * ({@link isStorableNumber}: wherever they are, including free-form cfg values and metadata), before any
 * schema runs.
 */
export function checkStructure(input: unknown, path: string, depth: number, what: string): void {
  if (typeof input === 'number' && !isStorableNumber(input)) {
    failWith([{ path: path || 'body', message: `${UNSTORABLE_NUMBER_MESSAGE} (got ${input})` }], what);
  }
  if (input === null || typeof input !== 'object') return;
  if (depth > MAX_BODY_DEPTH) {
    failWith([{ path, message: `is nested more than ${MAX_BODY_DEPTH} levels deep` }], what);
  }
  if (Array.isArray(input)) {
    input.forEach((v, i) => {
      checkStructure(v, `${path}.${i}`, depth + 1, what);
    });
    return;
  }
  for (const key of Object.keys(input)) {
    const child = joinPath(path, [key]);
    if (FORBIDDEN_KEYS.has(key)) failWith([{ path: child, message: 'this key name is not allowed' }], what);
    checkStructure((input as Record<string, unknown>)[key], child, depth + 1, what);
  }
}

/** Throws a ValidationError for `what` that names the first issue and counts the others. */
export function failWith(issues: FieldIssue[], what: string): never {
  const first = issues[0];
  const summary = first ? `${first.path}: ${first.message}` : 'invalid';
  const more =
    issues.length > 1 ? ` (and ${issues.length - 1} more problem${issues.length > 2 ? 's' : ''})` : '';
  throw new ValidationError(`Invalid ${what}: ${summary}${more}`, issues);
}
