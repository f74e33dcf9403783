/**
 * The portable application model, ported from TorchX's `torchx.specs.api`: an {@link AppDef} is made of
 * {@link Role}s, each with a {@link Resource} and mounts. Values are plain JSON-friendly objects (camelCase
 * field names) so they travel unchanged through the HTTP API, DynamoDB and the CLI.
 *
 * @module
 */
import { clonePlain } from './clone.js';

/** Sentinel for a string attribute that must be set but is not (TorchX `MISSING`). */
export const MISSING = '<MISSING>';
/** Sentinel for an optional string attribute that is unset (TorchX `NONE`). */
export const NONE = '<NONE>';

/** Capability key naming the instance type a role needs (set by AWS named resources). */
export const INSTANCE_TYPE_CAPABILITY = 'node.kubernetes.io/instance-type';

/** Value of a resource capability. */
export type CapabilityValue = string | number | boolean;

/**
 * What one replica of a role needs. Prefer named resources (see `namedResource`) to raw numbers.
 */
export interface Resource {
  /** Logical CPU cores; how a core maps to hardware is scheduler specific. */
  cpu: number;
  /** Number of GPUs. */
  gpu: number;
  /** Memory in MiB (TorchX calls it MB). */
  memMB: number;
  /** Extra hardware specs interpreted by the scheduler, e.g. `node.kubernetes.io/instance-type`. */
  capabilities: Record<string, CapabilityValue>;
  /** Named devices and their counts, e.g. `{ 'vpc.amazonaws.com/efa': 4 }`. */
  devices: Record<string, number>;
}

/** The "no resource" sentinel (cpu = gpu = memMB = -1). Schedulers reject roles that still carry it. */
export const NULL_RESOURCE: Readonly<Resource> = Object.freeze({
  cpu: -1,
  gpu: -1,
  memMB: -1,
  capabilities: Object.freeze({}) as Record<string, CapabilityValue>,
  devices: Object.freeze({}) as Record<string, number>,
});

/** True when `resource` equals {@link NULL_RESOURCE} field by field (TorchX compares dataclasses by value). */
export function isNullResource(resource: Resource): boolean {
  return (
    resource.cpu === NULL_RESOURCE.cpu &&
    resource.gpu === NULL_RESOURCE.gpu &&
    resource.memMB === NULL_RESOURCE.memMB &&
    Object.keys(resource.capabilities).length === 0 &&
    Object.keys(resource.devices).length === 0
  );
}

/**
 * Builds a Resource; capabilities and devices default to empty.
 *
 * @example
 * ```ts
 * const r = makeResource({ cpu: 8, gpu: 1, memMB: 32_000 });
 * ```
 */
export function makeResource(init: Pick<Resource, 'cpu' | 'gpu' | 'memMB'> & Partial<Resource>): Resource {
  return {
    cpu: init.cpu,
    gpu: init.gpu,
    memMB: init.memMB,
    capabilities: { ...(init.capabilities ?? {}) },
    devices: { ...(init.devices ?? {}) },
  };
}

/** Retry behaviour when a replica fails (TorchX `RetryPolicy`). */
export const RetryPolicy = {
  /** Replace only the failed replica. */
  REPLICA: 'REPLICA',
  /** Restart the whole application. Every scheduler supports it. */
  APPLICATION: 'APPLICATION',
  /** Restart every replica of the failed role. */
  ROLE: 'ROLE',
} as const;
/** One of {@link RetryPolicy}'s values. */
export type RetryPolicy = (typeof RetryPolicy)[keyof typeof RetryPolicy];

/** Bind-mounts a host path into the container. */
export interface BindMount {
  type: 'bind';
  /** Path on the host. */
  srcPath: string;
  /** Path in the container. */
  dstPath: string;
  readOnly: boolean;
}

/** Mounts a persistent volume (on AWS Batch: an EFS file system id) into the container. */
export interface VolumeMount {
  type: 'volume';
  /** Name or id of the volume. */
  src: string;
  /** Path in the container. */
  dstPath: string;
  readOnly: boolean;
}

/** Exposes a host device (e.g. `/dev/fuse`) to the container. */
export interface DeviceMount {
  type: 'device';
  /** Device path on the host. */
  srcPath: string;
  /** Device path in the container. */
  dstPath: string;
  /** Any of `r`, `w`, `m` (read, write, mknod); TorchX's default is `rwm`. */
  permissions: string;
}

/** Any of the three mount kinds, tagged by `type`. */
export type Mount = BindMount | VolumeMount | DeviceMount;

/**
 * A set of identical replicas that perform one duty in an app (e.g. `trainer`, `ps`).
 */
export interface Role {
  name: string;
  /** Container image (or other software bundle) the replicas run. */
  image: string;
  /** Command to run inside the container. */
  entrypoint: string;
  /** Arguments to the entrypoint; macros such as `${app_id}` are substituted at submit time. */
  args: string[];
  /** Environment variables; macros are substituted in the values. */
  env: Record<string, string>;
  /** How many replicas to run. */
  numReplicas: number;
  /** Minimum replicas for elastic schedulers; ignored where elasticity is unsupported. */
  minReplicas?: number;
  /** How many times a failed replica/app may be retried. */
  maxRetries: number;
  retryPolicy: RetryPolicy;
  /** What each replica needs. */
  resource: Resource;
  /** Named ports, e.g. `{ c10d: 29500 }`. */
  portMap: Record<string, number>;
  /** Free-form data; keys should follow `$scheduler.$key`. */
  metadata: Record<string, unknown>;
  mounts: Mount[];
}

/** A distributed application: roles plus app-level metadata (tags on AWS). */
export interface AppDef {
  name: string;
  roles: Role[];
  metadata: Record<string, string>;
}

/** Fields a caller must give to build a Role; the rest take TorchX's defaults. */
export type RoleInit = Pick<Role, 'name' | 'image'> & Partial<Omit<Role, 'name' | 'image'>>;

/**
 * Builds a Role with TorchX's defaults (entrypoint `<MISSING>`, 1 replica, 0 retries, APPLICATION policy,
 * NULL resource).
 *
 * @example
 * ```ts
 * const trainer = makeRole({ name: 'trainer', image: 'pytorch/torch:2', entrypoint: 'python',
 *   args: ['train.py'], resource: namedResource('aws_g5.xlarge') });
 * ```
 */
export function makeRole(init: RoleInit): Role {
  const role: Role = {
    name: init.name,
    image: init.image,
    entrypoint: init.entrypoint ?? MISSING,
    args: [...(init.args ?? [])],
    env: { ...(init.env ?? {}) },
    numReplicas: init.numReplicas ?? 1,
    maxRetries: init.maxRetries ?? 0,
    retryPolicy: init.retryPolicy ?? RetryPolicy.APPLICATION,
    resource: init.resource ? cloneResource(init.resource) : cloneResource(NULL_RESOURCE),
    portMap: { ...(init.portMap ?? {}) },
    metadata: { ...(init.metadata ?? {}) },
    mounts: (init.mounts ?? []).map((m) => ({ ...m })),
  };
  if (init.minReplicas !== undefined) role.minReplicas = init.minReplicas;
  return role;
}

/**
 * Builds an AppDef.
 *
 * @example
 * ```ts
 * const app = makeAppDef({ name: 'train', roles: [trainer], metadata: { team: 'vision' } });
 * ```
 */
export function makeAppDef(init: Pick<AppDef, 'name'> & Partial<AppDef>): AppDef {
  return { name: init.name, roles: [...(init.roles ?? [])], metadata: { ...(init.metadata ?? {}) } };
}

/** Deep copy of a Resource. */
export function cloneResource(resource: Readonly<Resource>): Resource {
  return {
    cpu: resource.cpu,
    gpu: resource.gpu,
    memMB: resource.memMB,
    capabilities: { ...resource.capabilities },
    devices: { ...resource.devices },
  };
}

/** Deep copy of an AppDef; use it before any in-place change so callers' objects stay untouched. */
export function cloneAppDef(app: Readonly<AppDef>): AppDef {
  return clonePlain(app) as AppDef;
}
