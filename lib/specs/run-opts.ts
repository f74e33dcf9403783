/**
 * Typed run options ("cfg") a scheduler declares once: name, type, default, required flag and help.
 * Port of TorchX's `runopts` with two additions: every snake_case option also answers to its camelCase
 * alias (`job_role_arn` / `jobRoleArn`), and lists of string maps are checked element by element (TorchX
 * rejected any non-empty `List[Dict[str, str]]`, a bug).
 *
 * @module
 */
import { InvalidRunConfigError, SECRET_CFG_KEYS } from './errors.js';
import { suggestNames } from './suggest.js';

/** The value types an option may have. */
export type RunOptType =
  | 'str'
  | 'int'
  | 'float'
  | 'bool'
  | 'list[str]'
  | 'dict[str,str]'
  | 'list[dict[str,str]]';

/** Any value an option may hold. `null` means "not set". */
export type CfgValue =
  | string
  | number
  | boolean
  | string[]
  | Record<string, string>
  | Record<string, string>[]
  | null;

/** A run configuration: option name → value. Unknown keys are kept (and ignored by schedulers). */
export type Cfg = Record<string, CfgValue | undefined>;

/** One declared option. */
export interface RunOpt {
  /** snake_case name, as in TorchX. */
  readonly name: string;
  readonly type: RunOptType;
  /** Default applied by `resolve()` when the option is unset; `null` when there is none. */
  readonly default: CfgValue;
  readonly required: boolean;
  readonly help: string;
  /** Other accepted spellings, e.g. the camelCase form. */
  readonly aliases: readonly string[];
}

/** Declaration accepted by {@link RunOpts.add}. */
export interface RunOptInit {
  type: RunOptType;
  help: string;
  default?: CfgValue;
  required?: boolean;
  /** Extra aliases; the camelCase alias of a snake_case name is added automatically. */
  aliases?: readonly string[];
}

/** JSON description of an option (for `GET /v1/schedulers` and `txs runopts`). */
export interface RunOptDescription {
  name: string;
  type: RunOptType;
  default: CfgValue;
  required: boolean;
  help: string;
  aliases: string[];
}

const TYPE_NAMES: Readonly<Record<RunOptType, string>> = {
  str: 'str',
  int: 'int',
  float: 'float',
  bool: 'bool',
  'list[str]': 'List[str]',
  'dict[str,str]': 'Dict[str, str]',
  'list[dict[str,str]]': 'List[Dict[str, str]]',
};

/** `snake_case` → `snakeCase` (TorchX `StructuredOpts.snake_to_camel`). */
export function snakeToCamel(name: string): string {
  const [first = '', ...rest] = name.split('_');
  return first + rest.map((p) => (p ? p[0]?.toUpperCase() + p.slice(1).toLowerCase() : '')).join('');
}

function isStringMap(value: unknown): value is Record<string, string> {
  return (
    value !== null &&
    typeof value === 'object' &&
    !Array.isArray(value) &&
    Object.values(value).every((v) => typeof v === 'string')
  );
}

/** True when `value` has option type `type` (`null` matches every type). */
export function isOfRunOptType(value: unknown, type: RunOptType): boolean {
  if (value === null || value === undefined) return true;
  switch (type) {
    case 'str':
      return typeof value === 'string';
    case 'int':
      return typeof value === 'number' && Number.isInteger(value);
    case 'float':
      return typeof value === 'number' && Number.isFinite(value);
    case 'bool':
      return typeof value === 'boolean';
    case 'list[str]':
      return Array.isArray(value) && value.every((v) => typeof v === 'string');
    case 'dict[str,str]':
      return isStringMap(value);
    case 'list[dict[str,str]]':
      return Array.isArray(value) && value.every(isStringMap);
  }
}

/** Python's name for the type of a JSON value, for TorchX-style messages. */
function pythonTypeName(value: unknown): string {
  if (value === null || value === undefined) return 'NoneType';
  if (typeof value === 'string') return 'str';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'number') return Number.isInteger(value) ? 'int' : 'float';
  if (Array.isArray(value)) return 'list';
  return 'dict';
}

/** Python-style rendering of a value (`None`, `True`, `['a', 'b']`). */
export function pythonRepr(value: unknown, nested = false): string {
  if (value === null || value === undefined) return 'None';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'string') return nested ? `'${value}'` : value;
  if (typeof value === 'number') return String(value);
  if (Array.isArray(value)) return `[${value.map((v) => pythonRepr(v, true)).join(', ')}]`;
  return `{${Object.entries(value as Record<string, unknown>)
    .map(([k, v]) => `'${k}': ${pythonRepr(v, true)}`)
    .join(', ')}}`;
}

/**
 * TorchX `to_dict`: parses `"K1=v1,K2=a;b"` into `{K1: "v1", K2: "a;b"}`. `,` or `;` separate pairs; since
 * they also separate list items, the last delimiter before a key is the pair delimiter, so a trailing token
 * without `=` stays part of the previous value.
 */
export function parseKeyValueLiteral(literal: string): Record<string, string> {
  const result: Record<string, string> = {};
  if (!literal) return result;
  const parts = literal
    .split('=')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  if (parts.length < 2) {
    throw new InvalidRunConfigError(`\`${literal}\` does not have at least one \`key=value\` pair`, literal);
  }
  const toValue = (v: string) => (v === '""' || v === "''" ? '' : v);
  let key = parts[0] as string;
  for (const valueAndKey of parts.slice(1, -1)) {
    const idx = Math.max(valueAndKey.lastIndexOf(','), valueAndKey.lastIndexOf(';'));
    if (idx <= 0 || idx === valueAndKey.length - 1) {
      throw new InvalidRunConfigError(
        `\`${valueAndKey}\` cannot be split into \`value<delim>key\` with delims=[',', ';']`,
        key,
      );
    }
    result[key] = toValue(valueAndKey.slice(0, idx).trim());
    key = valueAndKey.slice(idx + 1).trim();
  }
  result[key] = toValue(parts[parts.length - 1] as string);
  return result;
}

/**
 * The run options a scheduler accepts.
 *
 * @example
 * ```ts
 * const opts = new RunOpts()
 *   .add('queue', { type: 'str', required: true, help: 'job queue to submit to' })
 *   .add('priority', { type: 'int', default: 0, help: 'scheduling priority' });
 * opts.resolve({ queue: 'gpu' }); // { queue: 'gpu', priority: 0 }
 * opts.cfgFromStr('queue=gpu,priority=5'); // { queue: 'gpu', priority: 5 }
 * ```
 */
export class RunOpts implements Iterable<RunOpt> {
  private readonly opts = new Map<string, RunOpt>();
  private readonly aliasToName = new Map<string, string>();
  /** {@link resolve}'s view of the options: in declaration order, and each name and alias → its index. */
  private slots: { list: RunOpt[]; index: Map<string, number> } | undefined;

  /**
   * Declares an option. Throws `TypeError` for a required option with a default or a default of the wrong
   * type (programming errors, as in TorchX).
   */
  add(name: string, init: RunOptInit): this {
    const required = init.required ?? false;
    const defaultValue = init.default ?? null;
    if (required && defaultValue !== null) {
      throw new TypeError(
        `Required option: ${name} must not specify default value. Given: ${pythonRepr(defaultValue)}`,
      );
    }
    if (!isOfRunOptType(defaultValue, init.type)) {
      throw new TypeError(
        `Option: ${name}, must be of type: ${TYPE_NAMES[init.type]}. Given: ${pythonRepr(defaultValue)} (${pythonTypeName(defaultValue)})`,
      );
    }
    const camel = snakeToCamel(name);
    const aliases = [...new Set([...(camel !== name ? [camel] : []), ...(init.aliases ?? [])])];
    this.opts.set(name, { name, type: init.type, default: defaultValue, required, help: init.help, aliases });
    for (const alias of aliases) this.aliasToName.set(alias, name);
    this.slots = undefined;
    return this;
  }

  /** Adds every option of `other` (later declarations win). */
  update(other: RunOpts): this {
    for (const opt of other) {
      const init: RunOptInit = {
        type: opt.type,
        help: opt.help,
        default: opt.default,
        required: opt.required,
      };
      init.aliases = opt.aliases;
      this.add(opt.name, init);
    }
    return this;
  }

  /** The option named `name` (snake_case or an alias), or undefined. */
  get(name: string): RunOpt | undefined {
    return this.opts.get(name) ?? this.opts.get(this.aliasToName.get(name) ?? '');
  }

  /** Number of options. */
  get size(): number {
    return this.opts.size;
  }

  [Symbol.iterator](): Iterator<RunOpt> {
    return this.opts.values();
  }

  /**
   * Checks `cfg` against the declared options and fills defaults. camelCase aliases are renamed to their
   * snake_case names; keys that are not options are kept unchanged. A string given for a non-string option is
   * TorchX's string form and is cast like `-cfg` ({@link castRunOptValue}: `'5'` → 5, `'a,b'` → `['a','b']`).
   *
   * @param fallbacks values of options that `cfg` leaves out (or gives as null), used before their
   *   declared defaults, as if the caller had given them last (the Planner's: the caller's own name as
   *   `user`). An error quotes `cfg` alone: what the caller gave.
   * @throws InvalidRunConfigError when a required option is missing, a value has the wrong type, or an option
   *   is given under two spellings with different values.
   */
  resolve(cfg: Readonly<Cfg> = {}, fallbacks: Readonly<Cfg> = {}): Cfg {
    const { list, index } = this.resolveSlots();
    // Option values live in `values` by index; `resolved` gets each option's key when it first appears (so
    // the keys keep the caller's order, then the declaration order) and its value at the end.
    const values: CfgValue[] = new Array(list.length).fill(null);
    const present: boolean[] = new Array(list.length).fill(false);
    const resolved: Cfg = {};
    const place = (slot: number) => {
      if (present[slot]) return;
      present[slot] = true;
      resolved[(list[slot] as RunOpt).name] = null;
    };
    for (const key of Object.keys(cfg)) {
      const value = cfg[key];
      const slot = index.get(key);
      if (slot === undefined) {
        resolved[key] = value;
        continue;
      }
      const canonical = (list[slot] as RunOpt).name;
      const previous = values[slot];
      if (previous !== undefined && previous !== null && value !== undefined && value !== null) {
        if (JSON.stringify(previous) !== JSON.stringify(value)) {
          throw new InvalidRunConfigError(
            `Run option: ${canonical}, was given twice (as ${canonical} and ${snakeToCamel(canonical)}) with different values; give it once`,
            canonical,
            cfg,
          );
        }
      }
      if (value !== undefined && value !== null) values[slot] = value;
      place(slot);
    }
    for (const [key, value] of Object.entries(fallbacks)) {
      const slot = index.get(key);
      if (slot === undefined || value === undefined || (values[slot] ?? null) !== null) continue;
      values[slot] = value;
      place(slot);
    }
    for (let slot = 0; slot < list.length; slot++) {
      const opt = list[slot] as RunOpt;
      // TorchX's string form (what `-cfg queue=q,priority=5` gives) is cast with the option's declared type,
      // so that a client can send `-cfg` as strings in one request, without first asking for the options.
      let value = values[slot];
      if (typeof value === 'string' && opt.type !== 'str') value = castRunOptValue(opt, value);
      if (value === undefined || value === null) {
        if (opt.required) {
          throw new InvalidRunConfigError(
            `Required run option: ${opt.name}, must be provided and not \`None\``,
            opt.name,
            cfg,
          );
        }
        // Each resolution gets its own copy of a list or map default; primitives need none.
        const fallback = opt.default;
        value = typeof fallback === 'object' && fallback !== null ? structuredClone(fallback) : fallback;
      } else if (!isOfRunOptType(value, opt.type)) {
        const shown = SECRET_CFG_KEYS.has(opt.name) ? '<hidden>' : pythonRepr(value);
        throw new InvalidRunConfigError(
          `Run option: ${opt.name}, must be of type: ${TYPE_NAMES[opt.type]}, but was: ${shown} (${pythonTypeName(value)})`,
          opt.name,
          cfg,
        );
      }
      resolved[opt.name] = value;
    }
    return resolved;
  }

  /** The options in declaration order and the index of each name and alias (a name wins over an alias). */
  private resolveSlots(): { list: RunOpt[]; index: Map<string, number> } {
    if (this.slots === undefined) {
      const list = [...this.opts.values()];
      const index = new Map<string, number>();
      list.forEach((opt, slot) => {
        for (const alias of opt.aliases) {
          if (this.aliasToName.get(alias) === opt.name && !this.opts.has(alias)) index.set(alias, slot);
        }
      });
      list.forEach((opt, slot) => {
        index.set(opt.name, slot);
      });
      this.slots = { list, index };
    }
    return this.slots;
  }

  /**
   * Parses a `-cfg` literal (`"queue=gpu,priority=5,tags=a:1;b:2"`) and casts each value to its option's
   * type. Unknown keys are dropped and reported through `onUnknownKey` (TorchX warns). Defaults are not
   * applied; call {@link resolve} on the result.
   *
   * @throws InvalidRunConfigError when a value cannot be cast (e.g. `priority=high`).
   */
  cfgFromStr(literal: string, onUnknownKey?: (key: string) => void): Cfg {
    const cfg: Cfg = {};
    for (const [key, raw] of Object.entries(parseKeyValueLiteral(literal))) {
      const opt = this.get(key);
      if (!opt) {
        onUnknownKey?.(key);
        continue;
      }
      cfg[opt.name] = castRunOptValue(opt, raw);
    }
    return cfg;
  }

  /**
   * One warning per key of `cfg` that is not an option (nor an alias), with the closest option names:
   * TorchX drops such keys; a typo (`prioirty`) would silently leave the option at its default.
   *
   * @example
   * ```ts
   * opts.unknownKeyWarnings({ prioirty: 5 }); // ['`prioirty` is not a run option of aws_batch; ignoring it; did you mean `priority`?']
   * ```
   */
  unknownKeyWarnings(cfg: Readonly<Cfg>, scheduler: string): string[] {
    const spellings = [...this.opts.values()].flatMap((o) => [o.name, ...o.aliases]);
    return Object.keys(cfg)
      .filter((key) => this.get(key) === undefined)
      .map((key) => {
        const close = [...new Set(suggestNames(key, spellings).map((n) => this.get(n)?.name ?? n))];
        const hint =
          close.length > 0
            ? ` did you mean ${close.map((n) => `\`${n}\``).join(' or ')}?`
            : ` see \`txs runopts ${scheduler}\``;
        return `\`${key}\` is not a run option of ${scheduler}; ignoring it;${hint}`;
      });
  }

  /** JSON description of every option, in declaration order. */
  describe(): RunOptDescription[] {
    return [...this.opts.values()].map((o) => ({
      name: o.name,
      type: o.type,
      default: o.default,
      required: o.required,
      help: o.help,
      aliases: [...o.aliases],
    }));
  }

  /** TorchX's help text: a usage line, then required and optional arguments with type, default and help. */
  format(): string {
    const all = [...this.opts.values()];
    const required = all.filter((o) => o.required);
    const optional = all.filter((o) => !o.required);
    let out = '    usage:\n        ';
    [...required, ...optional].forEach((opt, i) => {
      let contents = `${opt.name}=${opt.name.toUpperCase()}`;
      if (!opt.required) contents = `[${contents}]`;
      if (i > 0) contents = `,${contents}`;
      out += contents;
    });
    for (const [section, opts] of [
      ['required', required],
      ['optional', optional],
    ] as const) {
      if (opts.length === 0) continue;
      out += `\n\n    ${section} arguments:`;
      for (const opt of opts) {
        const defaultText = opt.required ? '' : `, ${pythonRepr(opt.default)}`;
        out += `\n        ${opt.name}=${opt.name.toUpperCase()} (${TYPE_NAMES[opt.type]}${defaultText})`;
        out += `\n            ${opt.help}`;
      }
    }
    return out;
  }
}

/**
 * Casts the string form of an option value (from `-cfg` or a config file) to the option's type. Booleans
 * take TorchX's spellings only, `true` or `false` in any case: anything else (`yes`, `1`, `on`) is refused
 * rather than read as False.
 */
export function castRunOptValue(opt: RunOpt, raw: string): CfgValue {
  const fail = (expected: string): never => {
    const shown = SECRET_CFG_KEYS.has(opt.name) ? '<hidden>' : raw;
    throw new InvalidRunConfigError(
      `Run option: ${opt.name}, must be ${expected}, but was: ${shown}`,
      opt.name,
      {
        [opt.name]: shown,
      },
    );
  };
  switch (opt.type) {
    case 'bool': {
      const lowered = raw.trim().toLowerCase();
      if (lowered !== 'true' && lowered !== 'false') return fail('true or false (any case)');
      return lowered === 'true';
    }
    case 'int': {
      const trimmed = raw.trim();
      if (!/^[+-]?\d+$/.test(trimmed)) return fail('an integer (e.g. 5)');
      return Number.parseInt(trimmed, 10);
    }
    case 'float': {
      const n = Number(raw.trim());
      if (raw.trim() === '' || !Number.isFinite(n)) return fail('a number (e.g. 0.5)');
      return n;
    }
    case 'list[str]':
      return raw
        .replaceAll(';', ',')
        .split(',')
        .filter((v) => v.length > 0);
    case 'dict[str,str]': {
      const map: Record<string, string> = {};
      for (const pair of raw.replaceAll(';', ',').split(',')) {
        if (pair.length === 0) continue;
        const idx = pair.indexOf(':');
        if (idx < 0) return fail('key:value pairs separated by , or ; (e.g. team:ml;env:dev)');
        map[pair.slice(0, idx)] = pair.slice(idx + 1);
      }
      return map;
    }
    case 'list[dict[str,str]]': {
      const parsed: unknown = (() => {
        try {
          return JSON.parse(raw);
        } catch {
          return undefined;
        }
      })();
      if (!isOfRunOptType(parsed, 'list[dict[str,str]]') || parsed === null || parsed === undefined) {
        return fail('a JSON list of string maps (e.g. [{"Key":"team","Value":"ml"}])');
      }
      return parsed as Record<string, string>[];
    }
    case 'str':
      return raw;
  }
}
