/**
 * `cfg.hyperparameters` on the script's command line, as TorchX's SageMaker path delivered them.
 *
 * TorchX parsed the role's `--key value` / `--key=value` arguments into hyperparameters, merged them over
 * `cfg.hyperparameters` (`OrderedDict(cfg.hyperparameters).update(role args)`: the role's value wins, the
 * cfg's order comes first) and the SageMaker training toolkit passed every merged entry to the script as
 * `--key value`. Here the container runs the role's own command (`ContainerEntrypoint`/`ContainerArguments`),
 * so the cfg entries the role does not give are appended to that command as `--key value`, and
 * `HyperParameters` (hyperparameters.json) holds the cfg's keys with the values the command line has: both
 * say the same thing.
 *
 * @module
 */
import { shellQuote } from '../../specs/index.js';

/** What {@link mergeHyperParameters} returns. */
export interface MergedHyperParameters {
  /** The role's arguments with the cfg-only hyperparameters appended (inside a `sh -c`/`bash -c` command). */
  args: string[];
  /** `HyperParameters`: every cfg key, with the role's value where the role gives the key. */
  hyperParameters: Record<string, string>;
  /** cfg keys whose `--key` or value is longer than `maxArgLength`: not appended (the caller reports them). */
  tooLong: string[];
}

const SHELLS = new Set(['sh', 'bash', '/bin/sh', '/bin/bash', '/usr/bin/bash', '/usr/bin/env']);

/** Splits a POSIX shell command into words (quotes and backslashes; no expansion). */
export function shellSplit(command: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let quote: "'" | '"' | undefined;
  for (let i = 0; i < command.length; i++) {
    const c = command[i] as string;
    if (quote === "'") {
      if (c === "'") quote = undefined;
      else word += c;
    } else if (quote === '"') {
      if (c === '"') quote = undefined;
      else if (c === '\\' && i + 1 < command.length && '"\\$`'.includes(command[i + 1] as string)) {
        word += command[++i];
      } else word += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      inWord = true;
    } else if (c === '\\' && i + 1 < command.length) {
      word += command[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (inWord) words.push(word);
  return words;
}

/** The `--key value` and `--key=value` pairs among `words` (TorchX `_parse_args`, leniently: others are skipped). */
export function namedArguments(words: readonly string[]): Map<string, string> {
  const named = new Map<string, string>();
  for (let i = 0; i < words.length; i++) {
    const word = words[i] as string;
    if (!word.startsWith('--') || word === '--') continue;
    const eq = word.indexOf('=');
    if (eq >= 0) named.set(word.slice(2, eq), word.slice(eq + 1));
    else if (i + 1 < words.length && !(words[i + 1] as string).startsWith('--')) {
      named.set(word.slice(2), words[i + 1] as string);
      i += 1;
    } else named.set(word.slice(2), '');
  }
  return named;
}

/**
 * Merges `cfg.hyperparameters` into the role's command line as TorchX did (see the module comment).
 *
 * @example
 * ```ts
 * mergeHyperParameters('python', ['train.py', '--lr', '0.1'], { lr: '0.01', warmup: '100' });
 * // { args: ['train.py', '--lr', '0.1', '--warmup', '100'], hyperParameters: { lr: '0.1', warmup: '100' }, tooLong: [] }
 * ```
 */
export function mergeHyperParameters(
  entrypoint: string,
  args: readonly string[],
  cfgHyperParameters: Readonly<Record<string, string>>,
  maxArgLength = Number.POSITIVE_INFINITY,
): MergedHyperParameters {
  const shellCommand = SHELLS.has(entrypoint) && args.length === 2 && args[0] === '-c';
  const words = shellCommand ? shellSplit(args[1] as string) : [...args];
  const given = namedArguments(words);
  const hyperParameters: Record<string, string> = {};
  const extra: string[] = [];
  const tooLong: string[] = [];
  for (const [key, value] of Object.entries(cfgHyperParameters)) {
    const fromRole = given.get(key);
    hyperParameters[key] = fromRole ?? value;
    if (fromRole !== undefined) continue;
    if (!shellCommand && Math.max(key.length + 2, value.length) > maxArgLength) tooLong.push(key);
    else extra.push(`--${key}`, value);
  }
  if (extra.length === 0) return { args: [...args], hyperParameters, tooLong };
  const merged = shellCommand ? ['-c', `${args[1]} ${extra.map(shellQuote).join(' ')}`] : [...args, ...extra];
  return { args: merged, hyperParameters, tooLong };
}
