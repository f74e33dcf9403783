/**
 * The TorchX-style argument parser that turns `["-j", "2x8", "--script", "train.py", "--", "--epochs", "10"]`
 * into a component's typed arguments (TorchX `materialize_appdef`): each parameter is `--name` (and `-x`
 * for one-letter names), long options may be abbreviated to a unique prefix, `--name=value` works, the
 * first token that is not an option (or everything after `--`) goes to the component's `*args`.
 *
 * @module
 */
import { clonePlain, parseKeyValueLiteral } from '../specs/index.js';
import { ComponentArgumentError } from './errors.js';

/** Types a component parameter may have. `list` is comma-separated, `dict` is `K=V,K2=V2`. */
export type ParamType = 'str' | 'int' | 'float' | 'bool' | 'list' | 'dict';

/** A value after parsing. */
export type ParamValue = string | number | boolean | string[] | Record<string, string> | null;

/** One declared parameter of a component. */
export interface ComponentParam {
  /** Name as in TorchX (`max_retries`, `memMB`, `j`). */
  name: string;
  type: ParamType;
  help: string;
  /** Default value; `null` for optional parameters without one. Omit for required parameters. */
  default?: ParamValue;
  /** Smallest and largest value of an `int` or `float` parameter (both inclusive). */
  range?: readonly [min: number, max: number];
}

/** The remainder parameter (`*args`). */
export interface VarargsParam {
  name: string;
  help: string;
}

/** Parsed arguments with typed getters. */
export class ComponentArgs {
  constructor(
    private readonly component: string,
    private readonly values: ReadonlyMap<string, ParamValue>,
    /** The remainder (`*args`), without a leading `--`. */
    readonly varargs: readonly string[],
  ) {}

  private get(name: string): ParamValue {
    return this.values.get(name) ?? null;
  }

  /** A string parameter that has a value (required, or defaulted). */
  str(name: string): string {
    const v = this.get(name);
    if (typeof v !== 'string') throw new ComponentArgumentError(this.component, `--${name}`, 'is required');
    return v;
  }

  /** An optional string parameter. */
  optStr(name: string): string | undefined {
    const v = this.get(name);
    return typeof v === 'string' ? v : undefined;
  }

  /** A numeric parameter. */
  num(name: string): number {
    const v = this.get(name);
    if (typeof v !== 'number') throw new ComponentArgumentError(this.component, `--${name}`, 'is required');
    return v;
  }

  /** A boolean parameter. */
  bool(name: string): boolean {
    return this.get(name) === true;
  }

  /** An optional list parameter. */
  list(name: string): string[] | undefined {
    const v = this.get(name);
    return Array.isArray(v) ? (v as string[]) : undefined;
  }

  /** An optional map parameter. */
  dict(name: string): Record<string, string> | undefined {
    const v = this.get(name);
    return v !== null && typeof v === 'object' && !Array.isArray(v)
      ? { ...(v as Record<string, string>) }
      : undefined;
  }
}

function inRange(component: string, param: ComponentParam, flag: string, n: number): number {
  if (param.range === undefined) return n;
  const [min, max] = param.range;
  if (n >= min && n <= max) return n;
  throw new ComponentArgumentError(component, flag, `must be from ${min} to ${max}, got ${n}`);
}

function convert(component: string, param: ComponentParam, flag: string, raw: string): ParamValue {
  const bad = (expected: string): never => {
    throw new ComponentArgumentError(component, flag, `invalid ${expected} value: '${raw}'`);
  };
  switch (param.type) {
    case 'str':
      return raw;
    case 'int': {
      const n = /^\s*[+-]?\d+\s*$/.test(raw) ? Number.parseInt(raw, 10) : Number.NaN;
      return Number.isSafeInteger(n) ? inRange(component, param, flag, n) : bad('int');
    }
    case 'float': {
      const n = Number(raw);
      return raw.trim() !== '' && Number.isFinite(n) ? inRange(component, param, flag, n) : bad('float');
    }
    case 'bool': {
      const lower = raw.toLowerCase();
      if (lower === 'true') return true;
      if (lower === 'false') return false;
      return bad('bool (use True or False)');
    }
    case 'list':
      return raw.split(',').filter((v) => v.length > 0);
    case 'dict':
      try {
        return parseKeyValueLiteral(raw);
      } catch {
        return bad('map (use KEY=VALUE,KEY2=VALUE2)');
      }
  }
}

function flagsOf(param: ComponentParam): string[] {
  return param.name.length === 1 ? [`-${param.name}`, `--${param.name}`] : [`--${param.name}`];
}

/** A component's parameters by flag, and its long flags (for prefixes). */
interface FlagIndex {
  byFlag: ReadonlyMap<string, ComponentParam>;
  longFlags: readonly string[];
}

/** Flag indexes of the parameter lists seen so far (each component declares its list once). */
const flagIndexes = new WeakMap<readonly ComponentParam[], FlagIndex>();

function flagIndexOf(params: readonly ComponentParam[]): FlagIndex {
  let index = flagIndexes.get(params);
  if (index === undefined) {
    const byFlag = new Map<string, ComponentParam>();
    for (const p of params) for (const f of flagsOf(p)) byFlag.set(f, p);
    index = { byFlag, longFlags: [...byFlag.keys()].filter((f) => f.startsWith('--')) };
    flagIndexes.set(params, index);
  }
  return index;
}

/** The parameter a flag (or a unique prefix of a long flag) names. */
function resolveFlag(
  component: string,
  params: readonly ComponentParam[],
  varargs: VarargsParam | undefined,
  token: string,
): ComponentParam {
  const { byFlag, longFlags } = flagIndexOf(params);
  const exact = byFlag.get(token);
  if (exact) return exact;
  if (token.startsWith('--')) {
    const candidates = longFlags.filter((f) => f.startsWith(token));
    const unique = new Set(candidates.map((f) => byFlag.get(f)));
    if (unique.size === 1) return byFlag.get(candidates[0] as string) as ComponentParam;
    if (unique.size > 1) {
      throw new ComponentArgumentError(
        component,
        token,
        `ambiguous option: could match ${candidates.join(', ')}`,
      );
    }
  }
  const known = params.flatMap(flagsOf).join(', ');
  throw new ComponentArgumentError(
    component,
    token,
    `unrecognized argument; ${component} accepts ${known}${varargs ? ` and positional ${varargs.name} after --` : ''}`,
  );
}

/**
 * Parses CLI-style arguments for a component.
 *
 * @throws ComponentArgumentError naming the argument: unknown or ambiguous options, a missing value, a value
 *   of the wrong form, missing required parameters, or positional arguments for a component without `*args`.
 */
export function parseComponentArgs(
  component: string,
  params: readonly ComponentParam[],
  varargs: VarargsParam | undefined,
  argv: readonly string[],
): ComponentArgs {
  const values = new Map<string, ParamValue>();
  let rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i] as string;
    if (token === '--') {
      rest = argv.slice(i + 1);
      break;
    }
    const isOption = token.startsWith('-') && token.length > 1 && !/^-\d/.test(token);
    if (!isOption) {
      rest = argv.slice(i);
      break;
    }
    const eq = token.startsWith('--') ? token.indexOf('=') : -1;
    const flag = eq > 0 ? token.slice(0, eq) : token;
    const param = resolveFlag(component, params, varargs, flag);
    let raw: string;
    if (eq > 0) raw = token.slice(eq + 1);
    else {
      const next = argv[i + 1];
      if (next === undefined) throw new ComponentArgumentError(component, flag, 'expected one argument');
      raw = next;
      i += 1;
    }
    values.set(param.name, convert(component, param, flag, raw));
  }

  if (rest.length > 0 && !varargs) {
    throw new ComponentArgumentError(
      component,
      rest[0] as string,
      `unrecognized arguments: ${rest.join(' ')} (${component} takes no positional arguments)`,
    );
  }

  const missing = params.filter((p) => p.default === undefined && !values.has(p.name));
  if (missing.length > 0) {
    throw new ComponentArgumentError(
      component,
      missing.map((p) => `--${p.name}`).join(', '),
      'the following arguments are required',
    );
  }
  for (const p of params) if (!values.has(p.name)) values.set(p.name, clonePlain(p.default ?? null));
  return new ComponentArgs(component, values, rest);
}
