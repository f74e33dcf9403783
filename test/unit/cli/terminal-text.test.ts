import { describe, expect, it } from 'vitest';
import type { OutputStream } from '../../../lib/cli/io.js';
import {
  escapeControls,
  escapeStrict,
  escapeTerminalText,
  logLineForTerminal,
  TERMINAL_CONTROLS,
  terminalIO,
} from '../../../lib/cli/terminal-text.js';
import { displayText } from '../../../lib/specs/names.js';
import { memoryIO } from './helpers.js';

const { green, reset, clearLine } = TERMINAL_CONTROLS;

describe('escapeStrict', () => {
  it.each([
    ['an OSC title sequence', 'a\u001b]0;pwned\u0007b', 'a\\u{1B}]0;pwned\\u{7}b'],
    ['a cursor movement', 'x\u001b[1A\u001b[2Ky', 'x\\u{1B}[1A\\u{1B}[2Ky'],
    ['a carriage return', 'ok\rspoof', 'ok\\u{D}spoof'],
    ['a C1 CSI (U+009B)', 'a\u009b2Jb', 'a\\u{9B}2Jb'],
    ['a right-to-left override', 'evil\u202Etxt.exe', 'evil\\u{202E}txt.exe'],
    ['a first-strong isolate', 'a\u2068b\u2069', 'a\\u{2068}b\\u{2069}'],
    ['zero-width characters and a BOM', '\uFEFFa\u200Bb\u200Dc', '\\u{FEFF}a\\u{200B}b\\u{200D}c'],
    ['a line separator', 'a\u2028b', 'a\\u{2028}b'],
  ])('writes %s as visible escapes', (_what, input, shown) => {
    expect(escapeStrict(input)).toBe(shown);
  });

  it('keeps tabs, newlines and visible Unicode', () => {
    expect(escapeStrict('a\tb\nentraînement 训练 🙂')).toBe('a\tb\nentraînement 训练 🙂');
  });
});

describe('escapeControls (stdout on a terminal: txs log lines)', () => {
  it('escapes C0 and C1 controls but keeps tab, newline and format characters', () => {
    expect(escapeControls('10%\r50%\u001b[K\u009b\t|\n')).toBe('10%\\u{D}50%\\u{1B}[K\\u{9B}\t|\n');
    expect(escapeControls('שלום \u200F👩\u200D💻')).toBe('שלום \u200F👩\u200D💻');
  });
});

describe('escapeTerminalText', () => {
  it("lets the CLI's own colours and line clearing through and escapes everything else", () => {
    const own = `${clearLine}${green}ok${reset}`;
    expect(escapeTerminalText(`${own} \u001b[8mhidden\u001b]52;c;x\u0007`, 'strict')).toBe(
      `${own} \\u{1B}[8mhidden\\u{1B}]52;c;x\\u{7}`,
    );
  });

  it('leaves raw text alone', () => {
    expect(escapeTerminalText('\u001b[2J\u202E', 'raw')).toBe('\u001b[2J\u202E');
  });
});

describe('terminalIO', () => {
  function tty(written: string[], isTTY: boolean): OutputStream {
    return { write: (t) => written.push(t), isTTY };
  }

  it('escapes stderr strictly, stdout for controls on a terminal, and leaves piped stdout raw', () => {
    const base = memoryIO();
    const hostile = 'a\u001b[2J\u202Eb\n';
    for (const stdoutIsTTY of [true, false]) {
      const out: string[] = [];
      const err: string[] = [];
      const io = terminalIO({ ...base, stdout: tty(out, stdoutIsTTY), stderr: tty(err, true) });
      io.stdout.write(hostile);
      io.stderr.write(hostile);
      expect(io.stdout.isTTY).toBe(stdoutIsTTY);
      expect(err.join('')).toBe('a\\u{1B}[2J\\u{202E}b\n');
      expect(out.join('')).toBe(stdoutIsTTY ? 'a\\u{1B}[2J\u202Eb\n' : hostile);
    }
  });
});

describe('displayText (every formatter, before the CLI adds its own controls)', () => {
  it("escapes a job's copy of the CLI's own line clearing and colours, which the stream layer cannot tell apart", () => {
    const forged = `${clearLine}${green}fake: job SUCCEEDED${reset}`;
    expect(displayText(forged)).toBe('\\u{D}\\u{1B}[2K\\u{1B}[32mfake: job SUCCEEDED\\u{1B}[0m');
    expect(escapeTerminalText(displayText(forged), 'strict')).toBe(displayText(forged));
  });

  it('keeps newlines and tabs of a block, and escapes them in a line', () => {
    expect(displayText('Traceback:\n\tx\r', 'block')).toBe('Traceback:\n\tx\\u{D}');
    expect(displayText('a\nb\tc')).toBe('a\\u{A}b\\u{9}c');
  });
});

describe('logLineForTerminal (txs log on a terminal)', () => {
  it.each([
    ['a progress bar', ' 10%|#  |\r 50%|## |\r100%|###|\r', '100%|###|'],
    ['colours', '\u001b[1;31merror\u001b[0m \u009b32mok\u009bm', 'error ok'],
    ['a forged status line', '\r\u001b[2Kfake: job SUCCEEDED', '\\u{1B}[2Kfake: job SUCCEEDED'],
    ['cursor movement and OSC', '\u001b[1A\u001b]52;c;eA==\u0007x', '\\u{1B}[1A\\u{1B}]52;c;eA==\\u{7}x'],
    ['right-to-left text and emoji', 'שלום 👩\u200D💻', 'שלום 👩\u200D💻'],
  ])('shows %s as a terminal would, obeying nothing', (_what, line, shown) => {
    expect(logLineForTerminal(line)).toBe(shown);
  });
});
