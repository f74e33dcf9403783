/**
 * Python's `shlex.quote`, so the commands components and schedulers build are byte-for-byte what TorchX
 * builds.
 *
 * @module
 */

const UNSAFE = /[^\w@%+=:,./-]/;

/**
 * Quotes `s` for a POSIX shell the way Python's `shlex.quote` does.
 *
 * @example
 * ```ts
 * shellQuote('a b'); // "'a b'"
 * shellQuote(''); // "''"
 * ```
 */
export function shellQuote(s: string): string {
  if (s === '') return "''";
  if (!UNSAFE.test(s)) return s;
  return `'${s.replaceAll("'", `'"'"'`)}'`;
}
