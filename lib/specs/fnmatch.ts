/**
 * Python's `fnmatch.fnmatch` on POSIX (case-sensitive), the matcher TorchX applies to `.torchxignore` and
 * `.dockerignore` lines and to `local_docker`'s `copy_env` patterns. Unlike gitignore globs, `*` also matches `/`: `*.pyc` matches `a/b/c.pyc`.
 *
 * No npm package reproduces these semantics (picomatch, minimatch and micromatch all stop `*` at `/`), so
 * this is a port of `fnmatch.translate`'s rules: `*` any run of characters, `?` one character, `[seq]` and
 * `[!seq]` a character class, a `[` without a closing `]` a literal `[`, and a backslash a literal backslash.
 *
 * @module
 */

/** Escapes a literal character for a JavaScript regular expression. */
function escapeLiteral(char: string): string {
  return char.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&');
}

/** The body of a `[...]` class, translated to a JavaScript class (without the brackets). */
function translateClass(body: string): string {
  let negate = false;
  let rest = body;
  if (rest.startsWith('!')) {
    negate = true;
    rest = rest.slice(1);
  }
  // Inside a class only `\`, `]`, `[` and a leading `^` are special to JavaScript; `-` keeps its range meaning.
  const escaped = rest.replace(/[\\\]]/g, '\\$&').replace(/\[/g, '\\[');
  const safe = !negate && escaped.startsWith('^') ? `\\${escaped}` : escaped;
  return `${negate ? '^' : ''}${safe}`;
}

/**
 * Translates a `fnmatch` pattern to an anchored regular expression that matches the whole string.
 *
 * @returns the expression, or `undefined` when the pattern holds a character class JavaScript rejects
 *   (such as the reversed range `[z-a]`, which Python silently drops); callers then compare literally.
 */
export function fnmatchToRegExp(pattern: string): RegExp | undefined {
  let source = '';
  for (let i = 0; i < pattern.length; ) {
    const char = pattern[i] as string;
    i += 1;
    if (char === '*') {
      source += '[\\s\\S]*';
      while (pattern[i] === '*') i += 1;
    } else if (char === '?') {
      source += '[\\s\\S]';
    } else if (char === '[') {
      let j = i;
      if (pattern[j] === '!') j += 1;
      if (pattern[j] === ']') j += 1;
      while (j < pattern.length && pattern[j] !== ']') j += 1;
      if (j >= pattern.length) {
        source += '\\[';
      } else {
        source += `[${translateClass(pattern.slice(i, j))}]`;
        i = j + 1;
      }
    } else {
      source += escapeLiteral(char);
    }
  }
  try {
    return new RegExp(`^(?:${source})$`, 'u');
  } catch {
    return undefined;
  }
}

/** A compiled `fnmatch` pattern: `test(name)` is Python's `fnmatch.fnmatch(name, pattern)` on POSIX. */
export function compileFnmatch(pattern: string): (name: string) => boolean {
  const regexp = fnmatchToRegExp(pattern);
  return regexp === undefined ? (name) => name === pattern : (name) => regexp.test(name);
}
