/**
 * Macros substituted into a role's args, env values and string metadata at submit time, with Python's
 * `string.Template.safe_substitute` semantics: `$$` becomes `$`, unknown `${x}` and bare `$HOME` stay as
 * they are, and substituted values are not scanned again.
 *
 * @module
 */
import type { Role } from './app-def.js';

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

const TEMPLATE_PATTERN = /\$(?:(\$)|([_a-z][_a-z0-9]*)|\{([_a-z][_a-z0-9]*)\}|())/gi;

/**
 * Python `Template(text).safe_substitute(mapping)`.
 *
 * @example
 * ```ts
 * safeSubstitute('$${${rank0_env}:=localhost}', { rank0_env: 'MAIN_ADDR' }); // '${MAIN_ADDR:=localhost}'
 * ```
 */
export function safeSubstitute(text: string, mapping: Readonly<Record<string, string>>): string {
  return text.replace(
    TEMPLATE_PATTERN,
    (match, escaped: string | undefined, named: string | undefined, braced: string | undefined) => {
      if (escaped !== undefined) return '$';
      const key = named ?? braced;
      if (key !== undefined && Object.hasOwn(mapping, key)) return mapping[key] as string;
      return match;
    },
  );
}

function mappingOf(values: MacroValues): Record<string, string> {
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
  const mapping = mappingOf(values);
  // The substituted fields are built anew; only the rest needs a deep copy (same key order as `role`).
  const { args, env, metadata, ...rest } = role;
  return {
    ...role,
    ...(structuredClone(rest) as typeof rest),
    args: args.map((arg) => safeSubstitute(arg, mapping)),
    env: Object.fromEntries(Object.entries(env).map(([k, v]) => [k, safeSubstitute(v, mapping)])),
    metadata: substituteMetadata(metadata, mapping) as Record<string, unknown>,
  };
}
