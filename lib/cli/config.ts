/**
 * `.txsconfig`: the CLI's INI configuration file, shaped like TorchX's `.torchxconfig`.
 *
 * ```ini
 * [txs]
 * endpoint = https://abc123.execute-api.us-east-1.amazonaws.com/prod
 *
 * [cli:run]
 * scheduler = aws_batch
 *
 * [aws_batch]
 * queue = gpu-queue
 * ```
 *
 * Files are read from the working directory, then the home directory (or only the file named by
 * `TXS_CONFIG`); for each key the first file that sets it wins. Keys are case-sensitive.
 *
 * @module
 */
import { join } from 'node:path';
import { ConfigFileError } from './errors.js';
import type { CliIO } from './io.js';

/** The file name looked up in the working and home directories. */
export const CONFIG_FILE_NAME = '.txsconfig';

/** Sections of one INI document: section → key → value, in file order. */
export type IniSections = Map<string, Map<string, string>>;

const SECTION_LINE = /^\[([^\]]+)\]\s*$/;
const KEY_VALUE_LINE = /^([^=:\s][^=:]*?)\s*[=:]\s*(.*)$/;
/** ` # …` after a value or a section header: configparser (no inline comment prefixes) keeps it as text. */
const INLINE_COMMENT = /\s#/;

/**
 * Parses INI text the way Python's `configparser` reads `.torchxconfig`: `[section]` headers, `key = value`
 * or `key: value`, full-line comments with `#` or `;`, indented lines continuing the previous value,
 * case-sensitive keys. A key before any section, a duplicate section or a duplicate key is an error.
 *
 * @throws ConfigFileError naming `file` and the line.
 * @example
 * ```ts
 * parseIni('[aws_batch]\nqueue = gpu\n', '.txsconfig').get('aws_batch')?.get('queue'); // 'gpu'
 * ```
 */
export function parseIni(text: string, file: string): IniSections {
  const sections: IniSections = new Map();
  let current: Map<string, string> | undefined;
  let lastKey: string | undefined;
  const lines = text.split(/\r?\n/);
  lines.forEach((raw, index) => {
    const lineNumber = index + 1;
    if (raw.trim() === '' || /^\s*[#;]/.test(raw)) {
      lastKey = undefined;
      return;
    }
    if (/^\s/.test(raw) && current !== undefined && lastKey !== undefined) {
      current.set(lastKey, `${current.get(lastKey) ?? ''}\n${raw.trim()}`);
      return;
    }
    const line = raw.trim();
    if (INLINE_COMMENT.test(line)) {
      throw new ConfigFileError(
        file,
        lineNumber,
        `\`${line}\` has an inline comment, which .txsconfig (like .torchxconfig, read by Python's configparser) ` +
          'would take as part of the value: put the comment on a line of its own',
      );
    }
    const section = SECTION_LINE.exec(line);
    if (section) {
      const name = (section[1] ?? '').trim();
      if (sections.has(name)) throw new ConfigFileError(file, lineNumber, `section [${name}] appears twice`);
      current = new Map();
      sections.set(name, current);
      lastKey = undefined;
      return;
    }
    const pair = KEY_VALUE_LINE.exec(line);
    if (!pair) {
      throw new ConfigFileError(file, lineNumber, `expected \`key = value\` or \`[section]\`, got: ${line}`);
    }
    if (current === undefined) {
      throw new ConfigFileError(file, lineNumber, `\`${line}\` comes before any [section] header`);
    }
    const key = (pair[1] ?? '').trim();
    if (current.has(key)) throw new ConfigFileError(file, lineNumber, `key \`${key}\` appears twice`);
    current.set(key, (pair[2] ?? '').trim());
    lastKey = key;
  });
  return sections;
}

/** The loaded configuration: every file found, in precedence order (first wins). */
export class TxsConfig {
  constructor(
    /** `[path, sections]` pairs, highest precedence first. */
    readonly files: readonly (readonly [string, IniSections])[] = [],
  ) {}

  /** The value of `key` in `[section]` from the first file that sets it. */
  get(section: string, key: string): string | undefined {
    for (const [, sections] of this.files) {
      const value = sections.get(section)?.get(key);
      if (value !== undefined) return value;
    }
    return undefined;
  }

  /**
   * Every key of `[section]` across files, each with its value and the file it came from (first file
   * wins), in the order the keys first appear.
   */
  section(section: string): { key: string; value: string; file: string }[] {
    const seen = new Map<string, { key: string; value: string; file: string }>();
    for (const [file, sections] of this.files) {
      for (const [key, value] of sections.get(section) ?? []) {
        if (!seen.has(key)) seen.set(key, { key, value, file });
      }
    }
    return [...seen.values()];
  }

  /** A boolean the way `configparser.getboolean` reads it (`1/yes/true/on`, `0/no/false/off`). */
  getBoolean(section: string, key: string): boolean | undefined {
    const value = this.get(section, key);
    if (value === undefined) return undefined;
    const lowered = value.toLowerCase();
    if (['1', 'yes', 'true', 'on'].includes(lowered)) return true;
    if (['0', 'no', 'false', 'off'].includes(lowered)) return false;
    const file = this.files.find(([, s]) => s.get(section)?.has(key))?.[0] ?? CONFIG_FILE_NAME;
    throw new ConfigFileError(
      file,
      undefined,
      `[${section}] ${key} = ${value} is not a boolean (true/false)`,
    );
  }
}

/**
 * Loads the configuration: the file named by `TXS_CONFIG` alone when set (it must exist), else
 * `./.txsconfig` then `~/.txsconfig` (missing files are skipped).
 *
 * @throws ConfigFileError when a file cannot be read or parsed.
 */
export async function loadConfig(io: CliIO): Promise<TxsConfig> {
  const explicit = io.env.TXS_CONFIG;
  const candidates =
    explicit !== undefined && explicit !== ''
      ? [explicit]
      : [...new Set([join(io.cwd, CONFIG_FILE_NAME), join(io.homeDir, CONFIG_FILE_NAME)])];
  const files: [string, IniSections][] = [];
  for (const path of candidates) {
    let text: string;
    try {
      text = await io.readFile(path);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if ((code === 'ENOENT' || code === 'ENOTDIR') && path !== explicit) continue;
      throw new ConfigFileError(path, undefined, `cannot read it (${(error as Error).message})`);
    }
    files.push([path, parseIni(text, path)]);
  }
  return new TxsConfig(files);
}
