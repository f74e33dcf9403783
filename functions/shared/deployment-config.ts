/**
 * The deployment's security settings, read from the environment (names in env-names.ts, set by the CDK
 * construct; local mode sets its own defaults) once per cold start and checked then: who is an admin, which
 * roles have per-session owners, what host access jobs may have, which SageMaker instance types runs may use,
 * the stack tag, the Batch name prefix and the image that fetches Batch workspaces. A bad value fails every request with a 500 (logged) rather than running wider than
 * configured.
 *
 * @module
 */
import {
  type HostAccessPolicy,
  type HostAccessSettingNames,
  NO_HOST_ACCESS,
  parseHostPathList,
} from '../../lib/specs/index.js';
import { batchNamePrefix, CONTAINER_IMAGE_PATTERN, commaList, ENV, STACK_TAG_KEY } from './env-names.js';
import { canonicalPrincipal, type IdentityConfig } from './identity.js';

/** Everything security-related a function is configured with. */
export interface DeploymentConfig {
  readonly identity: IdentityConfig;
  readonly hostAccess: HostAccessPolicy;
  /** SageMaker instance types runs may use; undefined: any. */
  readonly sageMakerInstanceTypes?: readonly string[];
  /** Tags every launched job carries (the stack tag); empty outside a deployed stack. */
  readonly stackTags: Readonly<Record<string, string>>;
  /**
   * Starts every Batch job and job definition name (the Run role may register and submit only job
   * definitions named so); empty outside a deployed stack.
   */
  readonly batchNamePrefix: string;
  /** Image of the container that fetches an aws_batch workspace; undefined: the translator's default. */
  readonly workspaceFetchImage?: string;
}

/** The settings quoted in host-access refusals: the construct prop and its environment variable. */
export const HOST_ACCESS_SETTINGS: HostAccessSettingNames = {
  privileged: `the construct's hostAccess.privileged (${ENV.allowPrivileged}=true)`,
  hostPathPrefixes: `the construct's hostAccess.hostPathPrefixes (${ENV.allowedHostPaths})`,
  devices: `the construct's hostAccess.devices (${ENV.allowedDevices})`,
};

const ROLE_PATTERN = /^[\w+=,.@-]{1,64}\*?$|^\*$/;
const INSTANCE_TYPE = /^ml\.[a-z0-9-]+\.[a-z0-9]+$/;

/**
 * Reads and checks the settings; host access the environment does not configure is `defaultHostAccess`
 * (none; local mode: all, the user's own machine).
 *
 * @throws Error naming the environment variable and the bad value.
 */
export function readDeploymentConfig(
  env: Readonly<Record<string, string | undefined>>,
  defaultHostAccess: HostAccessPolicy = NO_HOST_ACCESS,
): DeploymentConfig {
  const admins = new Set<string>();
  for (const principal of commaList(env[ENV.adminPrincipals])) {
    try {
      admins.add(canonicalPrincipal(principal));
    } catch (error) {
      throw new Error(`${ENV.adminPrincipals}: ${principal}: ${(error as Error).message}`);
    }
  }
  const sessionOwnerRoles = commaList(env[ENV.sessionOwnerRoles]);
  for (const pattern of sessionOwnerRoles) {
    if (!ROLE_PATTERN.test(pattern)) {
      throw new Error(
        `${ENV.sessionOwnerRoles}: '${pattern}' is not a role name (a trailing * matches a prefix)`,
      );
    }
  }
  const privileged = env[ENV.allowPrivileged] ?? String(defaultHostAccess.privileged);
  if (privileged !== 'true' && privileged !== 'false') {
    throw new Error(`${ENV.allowPrivileged}: must be true or false, got '${privileged}'`);
  }
  const hostAccess: HostAccessPolicy = {
    privileged: privileged === 'true',
    hostPathPrefixes: env[ENV.allowedHostPaths]
      ? parseHostPathList(ENV.allowedHostPaths, env[ENV.allowedHostPaths])
      : defaultHostAccess.hostPathPrefixes,
    devices: env[ENV.allowedDevices]
      ? parseHostPathList(ENV.allowedDevices, env[ENV.allowedDevices])
      : defaultHostAccess.devices,
  };
  const instanceTypes = commaList(env[ENV.sageMakerInstanceTypes]);
  for (const type of instanceTypes) {
    if (!INSTANCE_TYPE.test(type)) {
      throw new Error(
        `${ENV.sageMakerInstanceTypes}: '${type}' is not a SageMaker instance type (ml.g5.xlarge)`,
      );
    }
  }
  const fetchImage = env[ENV.workspaceFetchImage];
  if (fetchImage !== undefined && fetchImage !== '' && !CONTAINER_IMAGE_PATTERN.test(fetchImage)) {
    throw new Error(`${ENV.workspaceFetchImage}: '${fetchImage}' is not a container image reference`);
  }
  const stackName = env[ENV.stackName];
  return {
    identity: { sessionOwnerRoles, admins },
    hostAccess,
    ...(instanceTypes.length > 0 ? { sageMakerInstanceTypes: instanceTypes } : {}),
    stackTags: stackName ? { [STACK_TAG_KEY]: stackName } : {},
    batchNamePrefix: stackName ? batchNamePrefix(stackName) : '',
    ...(fetchImage ? { workspaceFetchImage: fetchImage } : {}),
  };
}

let cached: DeploymentConfig | undefined;
let defaults: HostAccessPolicy = NO_HOST_ACCESS;

/** This process's settings, read from `process.env` on first use. */
export function deploymentConfig(): DeploymentConfig {
  cached ??= readDeploymentConfig(process.env, defaults);
  return cached;
}

/**
 * Tests and local mode: read the environment again on next use, with `defaultHostAccess` where it configures
 * none (the container passes local mode's).
 */
export function forgetDeploymentConfig(defaultHostAccess: HostAccessPolicy = NO_HOST_ACCESS): void {
  cached = undefined;
  defaults = defaultHostAccess;
}
