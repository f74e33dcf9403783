/**
 * TorchX's `--mounts` syntax: a flat list of `key=value` options where each mount starts with `type=`.
 * `type=bind,src=/host,dst=/job,readonly`, `type=volume,src=fs-1234,dst=/data`,
 * `type=device,src=/dev/fuse[,dst=...][,perm=rw]`.
 *
 * @module
 */
import type { Mount } from '../specs/index.js';
import { ValidationError } from '../specs/index.js';

const MOUNT_TYPES = ['bind', 'volume', 'device'] as const;
const KEY_ALIASES: Readonly<Record<string, string>> = {
  src: 'src',
  source: 'src',
  dst: 'dst',
  destination: 'dst',
  target: 'dst',
  readonly: 'readonly',
  read_only: 'readonly',
  perm: 'perm',
  type: 'type',
};

function fail(message: string): never {
  throw ValidationError.forField('mounts', message);
}

/**
 * Parses `--mounts` options into mounts. Options may be given as one comma-separated string or as a list.
 * A leading `~` in a bind source is kept as given (there is no home directory to expand on a server).
 *
 * @throws ValidationError naming `mounts` for an unknown key, a key before `type`, a bad type or missing
 *   `src`/`dst`.
 * @example
 * ```ts
 * parseMounts(['type=bind', 'src=/data', 'dst=/data', 'readonly']);
 * // [{ type: 'bind', srcPath: '/data', dstPath: '/data', readOnly: true }]
 * ```
 */
export function parseMounts(options: readonly string[]): Mount[] {
  const groups: Record<string, string>[] = [];
  for (const option of options.flatMap((o) => o.split(','))) {
    const trimmed = option.trim();
    if (trimmed === '') continue;
    const eq = trimmed.indexOf('=');
    const rawKey = (eq < 0 ? trimmed : trimmed.slice(0, eq)).toLowerCase();
    const value = eq < 0 ? '' : trimmed.slice(eq + 1);
    const key = KEY_ALIASES[rawKey];
    if (key === undefined) {
      fail(`unknown mount option '${rawKey}'; use type, src, dst, readonly or perm`);
    }
    if (key === 'type') {
      groups.push({ type: value });
      continue;
    }
    const current = groups[groups.length - 1];
    if (!current) fail(`type must be specified first (e.g. type=bind,src=/host,dst=/job); got '${trimmed}'`);
    current[key] = key === 'readonly' ? 'true' : value;
  }
  return groups.map((g) => {
    const type = g.type ?? '';
    if (!(MOUNT_TYPES as readonly string[]).includes(type)) {
      fail(`invalid mount type '${type}', must be one of ['bind', 'volume', 'device']`);
    }
    const src = g.src;
    if (!src) fail(`a ${type} mount needs src=...`);
    if (type === 'device') {
      const permissions = g.perm ?? 'rwm';
      if (!/^[rwm]+$/.test(permissions))
        fail(`invalid device permissions '${permissions}'; use only r, w and m`);
      return { type: 'device', srcPath: src, dstPath: g.dst || src, permissions };
    }
    const dst = g.dst;
    if (!dst) fail(`a ${type} mount needs dst=...`);
    const readOnly = g.readonly === 'true';
    return type === 'bind'
      ? { type: 'bind', srcPath: src, dstPath: dst, readOnly }
      : { type: 'volume', src, dstPath: dst, readOnly };
  });
}
