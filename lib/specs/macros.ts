/**
 * Macros substituted into a role's args, env values and string metadata at submit time, with Python's
 * `string.Template.safe_substitute` semantics: `$$` becomes `$`, unknown `${x}` and bare `$HOME` stay as
 * they are, and substituted values are not scanned again.
 *
 * @module
 */
import type { Role } from './app-def.js';
import { clonePlain } from './clone.js';

/** The macro placeholders (TorchX `specs.macros`). */
export const macros = {
  /** Root directory of the pulled image. */
  imgRoot: '${img_root}',
  /** Deprecated; always `DEPRECATED`. */
  baseImgRoot: '${base_img_root}',
  /** The application id assigned by the scheduler. */
  appId: '${app_id}',
  /**
   * The replica index, as each TorchX scheduler defines it: within the role on `local_cwd` (0, 1 for each
   * role), the node index across the whole job on `aws_batch` (a second role's replicas are 2, 3 after a
   * first role of 2), the host index on `aws_sagemaker` (one role).
   */
  replicaId: '${replica_id}',
  /**
   * The *name* of the environment variable holding rank 0's address. Resolve it in a shell:
   * `$${${rank0_env}:=localhost}` becomes `${MAIN_ADDR_VAR:=localhost}`.
   */
  rank0Env: '${rank0_env}',
} as const;

/** Values to substitute for each macro. */
export interface MacroValues {
  imgRoot: string;
  appId: string;
  replicaId: string;
  rank0Env: string;
  /** Defaults to `DEPRECATED`, as in TorchX. */
  baseImgRoot?: string;
}

/** `_` or an ASCII letter: the first character of a placeholder name. */
function isNameStart(code: number): boolean {
  return code === 95 || ((code | 32) >= 97 && (code | 32) <= 122);
}

/** `_`, an ASCII letter or a digit: the other characters of a placeholder name. */
function isNamePart(code: number): boolean {
  return isNameStart(code) || (code >= 48 && code <= 57);
}

/**
 * Python `Template(text).safe_substitute(mapping)`: at each `$`, `$$` becomes `$`; `$name` and `${name}`
 * (names of `_`, ASCII letters and digits, not starting with a digit) become the mapping's value when it has
 * the name and stay as they are otherwise; any other `$` stays. Substituted values are not scanned again.
 * One pass over the text, without a regular expression.
 *
 * @example
 * ```ts
 * safeSubstitute('$${${rank0_env}:=localhost}', { rank0_env: 'MAIN_ADDR' }); // '${MAIN_ADDR:=localhost}'
 * ```
 */
export function safeSubstitute(text: string, mapping: Readonly<Record<string, string>>): string {
  let at = text.indexOf('$');
  // Most arguments and values hold no `$`: nothing to scan.
  if (at < 0) return text;
  let out = '';
  let done = 0; // text before this index is in `out`
  while (at >= 0) {
    out += text.slice(done, at);
    const next = text.charCodeAt(at + 1);
    let end = at + 1; // the placeholder is text[at, end)
    let name: string | undefined;
    if (next === 36) {
      out += '$';
      done = at + 2;
      at = text.indexOf('$', done);
      continue;
    }
    if (isNameStart(next)) {
      end = at + 2;
      while (isNamePart(text.charCodeAt(end))) end++;
      name = text.slice(at + 1, end);
    } else if (next === 123 && isNameStart(text.charCodeAt(at + 2))) {
      let close = at + 3;
      while (isNamePart(text.charCodeAt(close))) close++;
      if (text.charCodeAt(close) === 125) {
        name = text.slice(at + 2, close);
        end = close + 1;
      }
    }
    out +=
      name !== undefined && Object.hasOwn(mapping, name) ? (mapping[name] as string) : text.slice(at, end);
    done = end;
    at = text.indexOf('$', done);
  }
  return out + text.slice(done);
}

/**
 * The `safeSubstitute` mapping of macro values (`app_id`, `replica_id`, …), for a translation that
 * substitutes many strings with the same values.
 *
 * @example
 * ```ts
 * safeSubstitute('--id ${app_id}', macroMapping({ imgRoot: '', appId: 'a1', replicaId: '0', rank0Env: 'M' })); // '--id a1'
 * ```
 */
export function macroMapping(values: MacroValues): Record<string, string> {
  return {
    img_root: values.imgRoot,
    app_id: values.appId,
    replica_id: values.replicaId,
    rank0_env: values.rank0Env,
    base_img_root: values.baseImgRoot ?? 'DEPRECATED',
  };
}

function substituteMetadata(value: unknown, mapping: Record<string, string>): unknown {
  if (typeof value === 'string') return safeSubstitute(value, mapping);
  if (Array.isArray(value)) return value.map((v) => substituteMetadata(v, mapping));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substituteMetadata(v, mapping)]));
  }
  return value;
}

/**
 * Returns a deep copy of `role` with macros substituted in every arg, every env value (not keys) and every
 * string in metadata. Image, entrypoint and name are left alone. The input role is not modified.
 *
 * @example
 * ```ts
 * const resolved = applyMacros(role, { imgRoot: '', appId: 'train-x1', replicaId: '0', rank0Env: 'MASTER_ADDR' });
 * ```
 */
export function applyMacros(role: Readonly<Role>, values: MacroValues): Role {
  const mapping = macroMapping(values);
  // The substituted fields are built anew; only the rest needs a deep copy (same key order as `role`).
  const { args, env, metadata, ...rest } = role;
  return {
    ...role,
    ...clonePlain(rest),
    args: args.map((arg) => safeSubstitute(arg, mapping)),
    env: Object.fromEntries(Object.entries(env).map(([k, v]) => [k, safeSubstitute(v, mapping)])),
    metadata: substituteMetadata(metadata, mapping) as Record<string, unknown>,
  };
}
