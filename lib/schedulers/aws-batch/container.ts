/**
 * One role as a Batch container and node range (TorchX `_role_to_node_properties`,
 * `resource_requirements_from_resource`, `get_device_mounts`), and the reverse mappings describe uses.
 *
 * @module
 */
import type {
  ContainerProperties,
  Device,
  DeviceCgroupPermission,
  KeyValuePair,
  MountPoint,
  NodeRangeProperty,
  ResourceRequirement,
  Ulimit,
  Volume,
} from '@aws-sdk/client-batch';
import {
  type DeviceMount,
  EFA_DEVICE,
  INSTANCE_TYPE_CAPABILITY,
  type Mount,
  makeResource,
  NEURON_DEVICE,
  type Resource,
  type Role,
  ValidationError,
} from '../../specs/index.js';
import { type AwsBatchOpts, parseUlimits } from './options.js';

/** `r`, `w`, `m` → Batch device permissions, in string order (TorchX). */
function devicePermissions(permissions: string): DeviceCgroupPermission[] {
  const out: DeviceCgroupPermission[] = [];
  for (const c of permissions) {
    const permission = DEVICE_PERMISSIONS[c];
    if (permission) out.push(permission);
  }
  return out;
}

const DEVICE_PERMISSIONS: Readonly<Record<string, DeviceCgroupPermission>> = {
  r: 'READ',
  w: 'WRITE',
  m: 'MKNOD',
};

/**
 * Device mounts for a resource's devices (TorchX `get_device_mounts`): `vpc.amazonaws.com/efa: n` →
 * `/dev/infiniband/uverbs0..n-1`, `aws.amazon.com/neurondevice: n` → `/dev/neuron0..n-1`, in the order of the
 * devices map. Other names are rejected by {@link checkApp}.
 */
export function deviceMountsOf(devices: Readonly<Record<string, number>>): DeviceMount[] {
  const mounts: DeviceMount[] = [];
  for (const [name, count] of Object.entries(devices)) {
    const base = name === EFA_DEVICE ? '/dev/infiniband/uverbs' : name === NEURON_DEVICE ? '/dev/neuron' : '';
    if (base === '') continue;
    for (let i = 0; i < count; i++) {
      mounts.push({ type: 'device', srcPath: `${base}${i}`, dstPath: `${base}${i}`, permissions: 'rwm' });
    }
  }
  return mounts;
}

/**
 * Batch resource requirements of a Resource (TorchX `resource_requirements_from_resource`): VCPU (1 when
 * cpu <= 0), MEMORY in MiB as is, GPU only when > 0.
 *
 * @throws ValidationError with TorchX's message when memMB is not positive.
 */
export function resourceRequirementsOf(
  resource: Readonly<Resource>,
  path = 'resource',
): ResourceRequirement[] {
  if (!(resource.memMB > 0)) {
    throw ValidationError.forField(
      `${path}.memMB`,
      `AWSBatchScheduler requires memMB to be set to a positive value, got ${resource.memMB}`,
    );
  }
  const requirements: ResourceRequirement[] = [
    { type: 'VCPU', value: String(resource.cpu > 0 ? resource.cpu : 1) },
    { type: 'MEMORY', value: String(resource.memMB) },
  ];
  if (resource.gpu > 0) requirements.push({ type: 'GPU', value: String(resource.gpu) });
  return requirements;
}

/** A Resource from Batch resource requirements (TorchX `resource_from_resource_requirements`); gpu 0 if absent. */
export function resourceFromRequirements(requirements: readonly ResourceRequirement[]): Resource {
  const value = (type: string) =>
    Number.parseInt(requirements.find((r) => r.type === type)?.value ?? '0', 10);
  return makeResource({ cpu: value('VCPU'), gpu: value('GPU'), memMB: value('MEMORY') });
}

/**
 * Node range `targetNodes` → number of nodes (TorchX `_parse_num_replicas`): `a:b`, `:b` (from 0), `a:` (to
 * numNodes-1) or `a`.
 */
export function parseNumReplicas(targetNodes: string, numNodes: number): number {
  const range = nodeRangeOf(targetNodes, numNodes);
  return range.end - range.start + 1;
}

/** `targetNodes` → first and last node index. */
export function nodeRangeOf(targetNodes: string, numNodes: number): { start: number; end: number } {
  const [startText = '', endText] = targetNodes.split(':');
  const start = startText === '' ? 0 : Number.parseInt(startText, 10);
  if (endText === undefined) return { start, end: start };
  return { start, end: endText === '' ? numNodes - 1 : Number.parseInt(endText, 10) };
}

/** The options every container of one translation shares (computed once per translation). */
export interface ContainerSettings {
  privileged: boolean;
  logGroup: string | null | undefined;
  /** Parsed `cfg.ulimits`; each container gets its own copy. */
  ulimits: Ulimit[] | undefined;
  jobRoleArn: string | null | undefined;
  executionRoleArn: string | null | undefined;
}

/** The container options of `cfg`, with `ulimits` parsed. */
export function containerSettingsOf(
  cfg: Pick<AwsBatchOpts, 'privileged'> & Partial<AwsBatchOpts>,
): ContainerSettings {
  return {
    privileged: cfg.privileged,
    logGroup: cfg.log_group,
    ulimits: cfg.ulimits ? parseUlimits(cfg.ulimits) : undefined,
    jobRoleArn: cfg.job_role_arn,
    executionRoleArn: cfg.execution_role_arn,
  };
}

/** Batch volumes, mount points and devices of a role's mounts, then of its resource's devices. */
function mountsOf(role: Readonly<Role>): { volumes: Volume[]; mountPoints: MountPoint[]; devices: Device[] } {
  const volumes: Volume[] = [];
  const mountPoints: MountPoint[] = [];
  const devices: Device[] = [];
  const deviceMounts = deviceMountsOf(role.resource.devices);
  const mounts: readonly Mount[] =
    deviceMounts.length === 0 ? role.mounts : [...role.mounts, ...deviceMounts];
  for (let i = 0; i < mounts.length; i++) {
    const mount = mounts[i] as Mount;
    const name = `mount_${i}`;
    switch (mount.type) {
      case 'bind':
        volumes.push({ name, host: { sourcePath: mount.srcPath } });
        mountPoints.push({ containerPath: mount.dstPath, readOnly: mount.readOnly, sourceVolume: name });
        break;
      case 'volume':
        volumes.push({ name, efsVolumeConfiguration: { fileSystemId: mount.src } });
        mountPoints.push({ containerPath: mount.dstPath, readOnly: mount.readOnly, sourceVolume: name });
        break;
      case 'device':
        devices.push({
          hostPath: mount.srcPath,
          containerPath: mount.dstPath,
          permissions: devicePermissions(mount.permissions),
        });
        break;
    }
  }
  return { volumes, mountPoints, devices };
}

/** A role's container, from its (macro-substituted) command and environment. */
export function containerOf(
  role: Readonly<Role>,
  command: string[],
  environment: KeyValuePair[],
  settings: ContainerSettings,
  path: string,
): ContainerProperties {
  const { volumes, mountPoints, devices } = mountsOf(role);
  const container: ContainerProperties = {
    command,
    image: role.image,
    environment,
    privileged: settings.privileged,
    resourceRequirements: resourceRequirementsOf(role.resource, `${path}.resource`),
    linuxParameters: { sharedMemorySize: role.resource.memMB, devices },
    logConfiguration: settings.logGroup
      ? { logDriver: 'awslogs', options: { 'awslogs-group': settings.logGroup } }
      : { logDriver: 'awslogs' },
    mountPoints,
    volumes,
  };
  if (settings.ulimits) container.ulimits = settings.ulimits.map((ulimit) => ({ ...ulimit }));
  if (settings.jobRoleArn) container.jobRoleArn = settings.jobRoleArn;
  if (settings.executionRoleArn) container.executionRoleArn = settings.executionRoleArn;
  const instanceType = role.resource.capabilities[INSTANCE_TYPE_CAPABILITY];
  if (role.numReplicas > 0 && instanceType !== undefined && instanceType !== '') {
    container.instanceType = String(instanceType);
  }
  return container;
}

/**
 * One role as a Batch node range (TorchX `_role_to_node_properties`). `role` must already have its macros
 * applied and its TORCHX_ROLE_* env set; `startIdx` is the role's first node index.
 */
export function roleToNodeRangeProperty(
  role: Readonly<Role>,
  startIdx: number,
  cfg: Pick<AwsBatchOpts, 'privileged'> & Partial<AwsBatchOpts>,
  path = 'role',
): NodeRangeProperty {
  const environment: KeyValuePair[] = Object.entries(role.env).map(([name, value]) => ({ name, value }));
  return {
    targetNodes: `${startIdx}:${startIdx + role.numReplicas - 1}`,
    container: containerOf(
      role,
      [role.entrypoint, ...role.args],
      environment,
      containerSettingsOf(cfg),
      path,
    ),
  };
}
