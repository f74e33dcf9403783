/**
 * The one rule for characters a name may not contain, shared by the request schema (app, role and other
 * names), app handles and the CLI's terminal output.
 *
 * @module
 */

/**
 * Characters no name may contain: control characters (category Cc: tabs, newlines, escape sequences),
 * Unicode format characters (Cf: bidi overrides and isolates U+202A–202E and U+2066–2069, zero-width
 * U+200B–200D, U+FEFF, soft hyphen, …) and the line and paragraph separators U+2028/U+2029. Names end up in
 * handles, job names, tags, log streams and `txs list`, where such characters hide or reorder text.
 */
export const UNSAFE_NAME_CHARACTERS = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;

/** The message every name rule gives for {@link UNSAFE_NAME_CHARACTERS}. */
export const UNSAFE_NAME_MESSAGE =
  'must not contain control characters (tabs, newlines, …) or invisible Unicode format characters ' +
  '(bidi overrides, zero-width spaces, …); retype it with visible characters only';

/**
 * True when `text` holds a character of {@link UNSAFE_NAME_CHARACTERS}.
 *
 * @example
 * ```ts
 * hasUnsafeNameCharacters('train\u202Egnp.exe'); // true
 * ```
 */
export function hasUnsafeNameCharacters(text: string): boolean {
  return UNSAFE_NAME_CHARACTERS.test(text);
}

const UNSAFE_GLOBAL = new RegExp(UNSAFE_NAME_CHARACTERS.source, 'gu');

/**
 * `text` with every character of {@link UNSAFE_NAME_CHARACTERS} written as a visible `\u{…}` escape, for
 * echoing untrusted text (a field path naming a bad key, a value in an error message) back to a person.
 *
 * @example
 * ```ts
 * escapeUnsafeCharacters('a\u202Eb\n'); // 'a\\u{202E}b\\u{A}'
 * ```
 */
export function escapeUnsafeCharacters(text: string): string {
  return text.replace(UNSAFE_GLOBAL, (c) => `\\u{${(c.codePointAt(0) ?? 0).toString(16).toUpperCase()}}`);
}

/** How {@link displayText} lays text out: `line` for one-line fields, `block` for text that may span lines. */
export type DisplayLayout = 'line' | 'block';

/**
 * The one function every human-readable formatter (CLI tables, AppStatus, `--wait` lines, describe, the
 * dashboard's text) passes server- and job-provided text through before adding its own layout or colours:
 * every character of {@link UNSAFE_NAME_CHARACTERS} (escape sequences, carriage returns, C1 controls, bidi
 * and zero-width characters) becomes a visible `\u{…}` escape, so such text can neither move the cursor,
 * rewrite a line, nor reorder or hide what is shown. A `block` keeps its newlines and tabs (tracebacks,
 * messages); a `line` escapes them too, so one field stays on one line (table cells, states, names).
 *
 * @example
 * ```ts
 * displayText('fake\r\u001b[2Kjob SUCCEEDED'); // 'fake\\u{D}\\u{1B}[2Kjob SUCCEEDED'
 * displayText('Traceback:\n  x', 'block'); // unchanged
 * ```
 */
export function displayText(text: string, layout: DisplayLayout = 'line'): string {
  const value = String(text);
  if (layout === 'line') return escapeUnsafeCharacters(value);
  return value
    .split(/([\t\n])/)
    .map((part) => (part === '\t' || part === '\n' ? part : escapeUnsafeCharacters(part)))
    .join('');
}
