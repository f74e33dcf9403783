/**
 * Host access as a deployment decision: privileged containers, host bind mounts and host devices give a job
 * the machine it runs on (and every other container on it). A {@link HostAccessPolicy} says which of them a
 * deployment allows; {@link checkHostAccess} refuses an app that asks for more, naming each field and the
 * setting that would allow it. Pure: the runner applies it before anything is written or submitted.
 *
 * @module
 */
import { posix } from 'node:path';
import type { AppDef } from './app-def.js';
import { type FieldIssue, TxsError } from './errors.js';

/** What a deployment lets jobs do on their hosts. */
export interface HostAccessPolicy {
  /** Privileged containers (`cfg.privileged`, e.g. aws_batch's option). */
  readonly privileged: boolean;
  /** Host paths bind mounts may name: absolute prefixes (a path matches at a `/` boundary), or `any`. */
  readonly hostPathPrefixes: readonly string[] | 'any';
  /** Host devices device mounts may name: exact absolute paths, or `any`. */
  readonly devices: readonly string[] | 'any';
}

/** Everything allowed: the user's own machine (local mode's default) and library use. */
export const ALLOW_ALL_HOST_ACCESS: HostAccessPolicy = Object.freeze({
  privileged: true,
  hostPathPrefixes: 'any',
  devices: 'any',
});

/** Nothing allowed: the deployed stack's default. */
export const NO_HOST_ACCESS: HostAccessPolicy = Object.freeze({
  privileged: false,
  hostPathPrefixes: [],
  devices: [],
});

/**
 * Names of the settings that widen a policy, quoted in refusals so the caller knows whom to ask and what for.
 * The deployment layer fills these in (the construct prop and its environment variable).
 */
export interface HostAccessSettingNames {
  readonly privileged: string;
  readonly hostPathPrefixes: string;
  readonly devices: string;
}

const DEFAULT_SETTING_NAMES: HostAccessSettingNames = {
  privileged: 'hostAccess.privileged',
  hostPathPrefixes: 'hostAccess.hostPathPrefixes',
  devices: 'hostAccess.devices',
};

/**
 * Thrown when an app asks for host access its deployment does not allow (HTTP 403). `issues` names each field;
 * the message names the deployment setting an administrator would change.
 */
export class HostAccessDeniedError extends TxsError {
  readonly code = 'HostAccessDenied';
  constructor(issues: readonly FieldIssue[]) {
    super(
      `This deployment does not allow the host access the app asks for: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`,
      { issues },
    );
  }
}

/**
 * The canonical form of an absolute host path (`.` and `..` resolved, no trailing `/`), or undefined for a
 * relative or empty one.
 */
export function canonicalHostPath(path: string): string | undefined {
  if (typeof path !== 'string' || !path.startsWith('/') || path.includes('\0')) return undefined;
  const normalized = posix.normalize(path);
  return normalized.length > 1 && normalized.endsWith('/') ? normalized.slice(0, -1) : normalized;
}

/** True when `path` is `prefix` or below it (`/data` covers `/data/x`, not `/database`). */
export function isUnderPrefix(path: string, prefix: string): boolean {
  if (prefix === '/') return true;
  return path === prefix || path.startsWith(`${prefix}/`);
}

function describeList(values: readonly string[] | 'any'): string {
  return values === 'any' ? 'any' : values.length === 0 ? 'none' : values.join(', ');
}

/**
 * Checks an app and its resolved run options against a policy.
 *
 * @throws HostAccessDeniedError listing every refused field: `cfg.privileged`,
 *   `app.roles.<i>.mounts.<j>.srcPath` (bind or device mounts).
 * @example
 * ```ts
 * checkHostAccess(app, { privileged: true }, NO_HOST_ACCESS); // throws, naming cfg.privileged
 * ```
 */
export function checkHostAccess(
  app: Readonly<AppDef>,
  cfg: Readonly<Record<string, unknown>>,
  policy: HostAccessPolicy,
  settings: HostAccessSettingNames = DEFAULT_SETTING_NAMES,
): void {
  const issues: FieldIssue[] = [];
  if (cfg.privileged === true && !policy.privileged) {
    issues.push({
      path: 'cfg.privileged',
      message: `privileged containers are not allowed by this deployment (an administrator allows them with ${settings.privileged})`,
    });
  }
  app.roles.forEach((role, i) => {
    role.mounts.forEach((mount, j) => {
      const path = `app.roles.${i}.mounts.${j}.srcPath`;
      if (mount.type === 'bind') {
        if (policy.hostPathPrefixes === 'any') return;
        const canonical = canonicalHostPath(mount.srcPath);
        if (canonical === undefined) {
          issues.push({ path, message: `'${mount.srcPath}' is not an absolute host path` });
        } else if (!policy.hostPathPrefixes.some((prefix) => isUnderPrefix(canonical, prefix))) {
          issues.push({
            path,
            message: `host path ${canonical} is not under an allowed prefix (allowed: ${describeList(policy.hostPathPrefixes)}; an administrator allows more with ${settings.hostPathPrefixes})`,
          });
        }
      } else if (mount.type === 'device') {
        if (policy.devices === 'any') return;
        const canonical = canonicalHostPath(mount.srcPath);
        if (canonical === undefined) {
          issues.push({ path, message: `'${mount.srcPath}' is not an absolute device path` });
        } else if (!policy.devices.includes(canonical)) {
          issues.push({
            path,
            message: `device ${canonical} is not allowed (allowed: ${describeList(policy.devices)}; an administrator allows more with ${settings.devices})`,
          });
        }
      }
    });
  });
  if (issues.length > 0) throw new HostAccessDeniedError(issues);
}

/**
 * Parses a comma-separated list of absolute paths (`*` alone means any), as deployment settings carry them.
 *
 * @throws Error naming `setting` for a relative path or `*` mixed with paths.
 */
export function parseHostPathList(setting: string, raw: string | undefined): readonly string[] | 'any' {
  const items = (raw ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (items.length === 1 && items[0] === '*') return 'any';
  return items.map((item) => {
    const canonical = canonicalHostPath(item);
    if (canonical === undefined || item === '*') {
      throw new Error(`${setting}: '${item}' is not an absolute path (or use * alone to allow any)`);
    }
    return canonical;
  });
}
