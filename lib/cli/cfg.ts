/**
 * Client-side run configuration: `-cfg k=v,…` cast with the scheduler's declared run options (fetched from
 * `GET /v1/schedulers`), over the defaults of the scheduler's section in `.txsconfig`.
 *
 * @module
 */
import { InvalidRunConfigError, SECRET_CFG_KEYS } from '../specs/errors.js';
import {
  type Cfg,
  castRunOptValue,
  isOfRunOptType,
  parseKeyValueLiteral,
  type RunOpt,
  type RunOptDescription,
  type RunOptInit,
  RunOpts,
} from '../specs/run-opts.js';
import type { TxsConfig } from './config.js';
import { UsageError } from './errors.js';

/**
 * Rebuilds a {@link RunOpts} from its JSON description (as `GET /v1/schedulers` sends it), so values are
 * cast and checked exactly as the server declares them.
 *
 * @example
 * ```ts
 * const opts = runOptsFromDescriptions(scheduler.runOpts);
 * opts.cfgFromStr('queue=gpu,priority=5'); // { queue: 'gpu', priority: 5 }
 * ```
 */
export function runOptsFromDescriptions(descriptions: readonly RunOptDescription[]): RunOpts {
  const opts = new RunOpts();
  for (const d of descriptions) {
    const init: RunOptInit = { type: d.type, help: d.help, required: d.required, aliases: d.aliases ?? [] };
    const declared = d.required ? null : (d.default ?? null);
    // A server's default of another type than it declares is dropped rather than refusing every option.
    opts.add(d.name, { ...init, default: isOfRunOptType(declared, d.type) ? declared : null });
  }
  return opts;
}

/** Inputs of {@link buildCfg}. */
export interface BuildCfgInput {
  scheduler: string;
  runOpts: RunOpts;
  /** The `-cfg` literal, if given. */
  literal?: string;
  config: TxsConfig;
  /** Receives a warning for each unknown key (TorchX warns and drops them). */
  warn: (message: string) => void;
}

/**
 * The cfg to send: `-cfg` values win over `.txsconfig`'s `[scheduler]` section (cwd file over home file).
 * Values are cast to each option's type; `None` in the file means "unset". Defaults are not filled in: the
 * server applies them, so a changed default is never pinned by the client.
 *
 * @throws UsageError when a value cannot be cast (e.g. `priority=high`) or the literal is malformed.
 */
export function buildCfg(input: BuildCfgInput): Cfg {
  const { scheduler, runOpts, config, warn } = input;
  let cfg: Cfg = {};
  if (input.literal !== undefined && input.literal.trim() !== '') {
    try {
      cfg = runOpts.cfgFromStr(input.literal, (key) =>
        warn(runOpts.unknownKeyWarnings({ [key]: null }, scheduler).join('')),
      );
    } catch (error) {
      throw cfgError(error, scheduler, '-cfg');
    }
  }
  for (const { key, value, file } of config.section(scheduler)) {
    const opt = runOpts.get(key);
    if (opt === undefined) {
      warn(
        `\`${key} = ${value}\` in the [${scheduler}] section of ${file} is not a run option of ${scheduler}; ` +
          'remove it to silence this warning',
      );
      continue;
    }
    if (cfg[opt.name] !== undefined) continue;
    if (value === 'None') {
      cfg[opt.name] = null;
      continue;
    }
    try {
      cfg[opt.name] = castRunOptValue(opt, opt.type === 'bool' ? configBoolean(value, opt.name) : value);
    } catch (error) {
      throw cfgError(error, scheduler, `[${scheduler}] in ${file}`);
    }
  }
  return cfg;
}

/**
 * The `-cfg` literal as TorchX's string forms (`{queue: 'gpu', priority: '5'}`), for a run that needs no
 * `.txsconfig` defaults: the API casts each value with the scheduler's declared types (a `400` naming
 * `cfg.<option>` when one does not cast) and warns about unknown keys, so `txs run` makes one request.
 *
 * @throws UsageError when the literal has no `key=value` pair or cannot be split.
 */
export function literalCfg(literal: string, scheduler: string): Cfg {
  try {
    const cfg: Cfg = parseKeyValueLiteral(literal);
    // Options that may hold secrets (local_cwd's `env`) go as a map, so the API keeps their values out of
    // records, digests and messages exactly as it does for a map.
    for (const name of SECRET_CFG_KEYS) {
      const raw = cfg[name];
      if (typeof raw === 'string') cfg[name] = castRunOptValue(SECRET_MAP_OPTION(name), raw);
    }
    return cfg;
  } catch (error) {
    throw cfgError(error, scheduler, '-cfg');
  }
}

const SECRET_MAP_OPTION = (name: string): RunOpt => ({
  name,
  type: 'dict[str,str]',
  default: null,
  required: false,
  help: '',
  aliases: [],
});

function configBoolean(value: string, name: string): string {
  const lowered = value.toLowerCase();
  if (['1', 'yes', 'true', 'on'].includes(lowered)) return 'true';
  if (['0', 'no', 'false', 'off'].includes(lowered)) return 'false';
  throw new InvalidRunConfigError(
    `Run option: ${name}, must be a boolean (true/false), but was: ${value}`,
    name,
  );
}

function cfgError(error: unknown, scheduler: string, where: string): unknown {
  if (error instanceof InvalidRunConfigError) {
    return new UsageError(
      `bad run option in ${where}: ${error.message.replace(/\. Given: .*$/s, '')}`,
      `\`txs runopts ${scheduler}\` shows each option's type; -cfg takes key=value pairs separated by commas`,
      { cause: error },
    );
  }
  return error;
}
