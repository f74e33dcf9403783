/**
 * The one place a caller's log `regex` is compiled. Patterns run on RE2 semantics ([re2js](https://github.com/le0pard/re2js),
 * a pure-JavaScript port of RE2/J): matching time is linear in the line's length times the pattern's size,
 * so no pattern can hold a function's event loop (a JavaScript `RegExp` such as `^(a+)+$` backtracks
 * exponentially). Features RE2 cannot run in linear time (backreferences, lookahead, lookbehind) are refused
 * with a ValidationError naming `regex`.
 *
 * Only the Logs function imports this module, so the engine (~150 KB minified) lands in that bundle alone.
 *
 * @module
 */
import { RE2JS, RE2JSException } from 're2js';
import { ValidationError } from '../specs/index.js';
import type { LineFilter } from './logs.js';

/** Longest pattern accepted (characters); with RE2's repeat limit of 1,000 it bounds the program size. */
export const MAX_LOG_REGEX_LENGTH = 512;

const SYNTAX_HINT =
  'use RE2 syntax (as in Go and grep -E): no backreferences (\\1), lookahead (?=…) or lookbehind (?<=…); ' +
  'write \\x{41} rather than \\u0041';

/**
 * Compiles a caller's log regex into a {@link LineFilter} (search semantics: a line is kept when the
 * pattern matches anywhere in it). Empty or absent means no filter.
 *
 * @throws ValidationError naming `regex` when the pattern is too long, malformed or uses a feature RE2 has no
 *   linear-time algorithm for.
 * @example
 * ```ts
 * compileLogFilter('loss=\\d+')?.matches('epoch 1 loss=3'); // true
 * ```
 */
export function compileLogFilter(regex: string | undefined): LineFilter | undefined {
  if (regex === undefined || regex === '') return undefined;
  if (regex.length > MAX_LOG_REGEX_LENGTH) {
    throw ValidationError.forField(
      'regex',
      `is ${regex.length} characters long; use at most ${MAX_LOG_REGEX_LENGTH} characters`,
    );
  }
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(regex);
  } catch (e) {
    if (!(e instanceof RE2JSException)) throw e;
    throw ValidationError.forField(
      'regex',
      `is not a pattern this API can run (${e.message}); ${SYNTAX_HINT}`,
    );
  }
  return { source: regex, matches: (line) => compiled.test(line) };
}
