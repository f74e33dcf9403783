/**
 * What the CLI writes to a terminal is escaped here, so text from a server, a job or an error message
 * cannot drive the terminal (move the cursor, rewrite earlier lines, set the title or clipboard with OSC
 * sequences) or reorder what is shown (bidi overrides). Characters are written as visible `\u{…}` escapes.
 *
 * Three modes, chosen per stream by {@link terminalIO}:
 * - `strict` (stderr: errors, warnings, progress, `--log` output): every control character except tab and
 *   newline, C1 controls, Unicode format characters (bidi, zero-width) and line/paragraph separators — the
 *   names rule of `lib/specs` (`UNSAFE_NAME_CHARACTERS`).
 * - `controls` (stdout on a terminal: results and `txs log` lines): only C0 and C1 controls and DEL, except
 *   tab and newline. Log lines are the job's own output: right-to-left text and emoji (which use format
 *   characters such as U+200D) stay readable, while escape sequences and carriage returns are shown, not
 *   obeyed. Log lines on a terminal are shown with {@link logLineForTerminal} first.
 * - `raw` (stdout that is not a terminal): untouched, so `txs log > out.txt` and `txs list --json | jq`
 *   get the bytes the server sent.
 *
 * The CLI's own colours and live-line clearing (exactly {@link TERMINAL_CONTROLS}) pass through — and so
 * would a job's copy of them: a stream cannot tell them apart. That is why every formatter escapes server
 * and job text itself with `displayText` (lib/specs/names.ts) before adding its own controls; this layer
 * catches what a formatter missed.
 *
 * @module
 */
import { displayText } from '../specs/names.js';
import type { CliIO, OutputStream } from './io.js';

/** The only terminal controls the CLI itself writes: three colours, reset, and "clear the line". */
export const TERMINAL_CONTROLS = {
  green: '\u001b[32m',
  red: '\u001b[31m',
  bold: '\u001b[1m',
  reset: '\u001b[0m',
  clearLine: '\r\u001b[2K',
} as const;

/** How a stream's text is escaped. */
export type EscapeMode = 'strict' | 'controls' | 'raw';

const OWN_CONTROLS = new RegExp(
  `(${Object.values(TERMINAL_CONTROLS)
    .map((c) => c.replace(/[[\]\\]/g, '\\$&'))
    .join('|')})`,
  'u',
);
// Category Cc is exactly C0, DEL and C1; tab and newline are kept.
const C0_C1 = /[^\P{Cc}\t\n]/gu;
const hex = (c: string) => `\\u{${(c.codePointAt(0) ?? 0).toString(16).toUpperCase()}}`;

/**
 * `text` with control and format characters escaped, tab and newline kept.
 *
 * @example
 * ```ts
 * escapeStrict('bob\u202E\u001b[2J\n'); // 'bob\\u{202E}\\u{1B}[2J\n'
 * ```
 */
export function escapeStrict(text: string): string {
  return displayText(text, 'block');
}

/**
 * `text` with C0/C1 controls and DEL escaped, tab and newline kept; format characters untouched.
 *
 * @example
 * ```ts
 * escapeControls('10%\r50%\u001b[K'); // '10%\\u{D}50%\\u{1B}[K'
 * ```
 */
export function escapeControls(text: string): string {
  return text.replace(C0_C1, hex);
}

/**
 * Escapes `text` for `mode`, letting the CLI's own {@link TERMINAL_CONTROLS} through.
 *
 * @example
 * ```ts
 * escapeTerminalText('\u001b[32mok\u001b[0m \u001b]0;title\u0007', 'strict'); // colours kept, OSC escaped
 * ```
 */
export function escapeTerminalText(text: string, mode: EscapeMode): string {
  if (mode === 'raw') return text;
  const escapePart = mode === 'strict' ? escapeStrict : escapeControls;
  return text
    .split(OWN_CONTROLS)
    .map((part, i) => (i % 2 === 1 ? part : escapePart(part)))
    .join('');
}

// SGR ("select graphic rendition": colours, bold), 7-bit and 8-bit CSI forms.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching escape sequences is the point
const SGR = /(?:\u001b\[|\u009b)[0-9;:]*m/gu;

/**
 * A line of a job's log as `txs log` shows it on a terminal, where a job's control codes are never obeyed:
 * carriage returns are resolved as a terminal would at the end of the line (only the text after the last
 * `\r` stays: a progress bar shows its latest state), colour sequences (SGR) are dropped with their text
 * kept, and every other control (cursor movement, erasing, OSC titles and clipboard, bells, C1) is shown
 * as a visible escape ({@link escapeControls}). Lines written to a pipe or file are not passed here: they
 * keep the job's bytes.
 *
 * @example
 * ```ts
 * logLineForTerminal(' 10%|#   |\r100%|####|\r'); // '100%|####|'
 * logLineForTerminal('\u001b[32mok\u001b[0m \u001b]0;t\u0007'); // 'ok \\u{1B}]0;t\\u{7}'
 * ```
 */
export function logLineForTerminal(line: string): string {
  const segments = line.replace(/\r+$/, '').split('\r');
  return escapeControls((segments[segments.length - 1] ?? '').replace(SGR, ''));
}

/** `stream` with every write escaped for `mode`. */
export function escapingStream(stream: OutputStream, mode: EscapeMode): OutputStream {
  return {
    write: (text) => stream.write(escapeTerminalText(text, mode)),
    get isTTY() {
      return stream.isTTY;
    },
  };
}

/**
 * `io` with its output streams escaped: stderr strictly, stdout for control characters on a terminal and
 * raw otherwise (see the module documentation).
 *
 * @example
 * ```ts
 * process.exitCode = await main(process.argv.slice(2), terminalIO(processIO()));
 * ```
 */
export function terminalIO(io: CliIO): CliIO {
  return {
    ...io,
    stdout: escapingStream(io.stdout, io.stdout.isTTY ? 'controls' : 'raw'),
    stderr: escapingStream(io.stderr, 'strict'),
  };
}
