/**
 * The parts of a Kubernetes pod TorchX's `kubernetes` and `kubernetes_mcad` schedulers build alike from a
 * role (`role_to_pod` in both): resource limits and requests, the node selector, volumes and mounts, ports.
 * Objects are the JSON the Kubernetes API takes (what the Python client's `sanitize_for_serialization`
 * yields: camelCase keys, unset fields absent).
 *
 * @module
 */
import { INSTANCE_TYPE_CAPABILITY, type Role } from '../../specs/index.js';
import { TORCHX_LABELS, TORCHX_VERSION_TAG_VALUE } from '../torchx-version.js';

/** A JSON object of the Kubernetes API. */
export type K8sObject = Record<string, unknown>;

/** CPU TorchX keeps back from each request for the node's own use (millicores). */
export const RESERVED_MILLICPU = 100;
/** Memory TorchX keeps back from each request for the node's own use (MB). */
export const RESERVED_MEMMB = 1024;
/** Name of the shared-memory volume every pod gets. */
export const SHM_VOLUME = 'dshm';

/** Label keys TorchX puts on pods: its own and Kubernetes' recommended ones. */
export const LABELS = {
  ...TORCHX_LABELS,
  kubeAppName: 'app.kubernetes.io/name',
  organization: 'app.kubernetes.io/managed-by',
  uniqueName: 'app.kubernetes.io/instance',
} as const;

/** The `torchx.pytorch.org/version` label value (the TorchX this reproduces). */
export const K8S_TORCHX_VERSION = TORCHX_VERSION_TAG_VALUE;
/** The istio annotation TorchX sets to keep sidecars out of training pods. */
export const ANNOTATION_ISTIO_SIDECAR = 'sidecar.istio.io/inject';

/**
 * Lower-cases `data` and keeps only `[a-z0-9-]`, after dropping one leading `-` (TorchX
 * `torchx.util.strings.normalize_str`).
 *
 * @example
 * ```ts
 * normalizeStr('Multi_Role.app'); // 'multiroleapp'
 * ```
 */
export function normalizeStr(data: string): string {
  const text = data.startsWith('-') ? data.slice(1) : data;
  return (text.toLowerCase().match(/[a-z0-9-]/g) ?? []).join('');
}

/** Limits and requests of a role (TorchX: requests are limits minus the node reserve; GPUs equal). */
export function resourcesOf(role: Role): {
  limits: Record<string, string>;
  requests: Record<string, string>;
} {
  const limits: Record<string, string> = {};
  const requests: Record<string, string> = {};
  const { cpu, memMB, gpu, devices } = role.resource;
  if (cpu > 0) {
    const mcpu = Math.trunc(cpu * 1000);
    limits.cpu = `${mcpu}m`;
    requests.cpu = `${Math.max(mcpu - RESERVED_MILLICPU, 0)}m`;
  }
  if (memMB > 0) {
    limits.memory = `${Math.trunc(memMB)}M`;
    requests.memory = `${Math.max(Math.trunc(memMB) - RESERVED_MEMMB, 0)}M`;
  }
  if (gpu > 0) {
    requests['nvidia.com/gpu'] = String(gpu);
    limits['nvidia.com/gpu'] = String(gpu);
  }
  for (const [name, count] of Object.entries(devices)) limits[name] = String(count);
  return { limits, requests };
}

/** The node selector: the `node.kubernetes.io/instance-type` capability, if any. */
export function nodeSelectorOf(role: Role): Record<string, string> {
  const value = role.resource.capabilities[INSTANCE_TYPE_CAPABILITY];
  return value === undefined ? {} : { [INSTANCE_TYPE_CAPABILITY]: String(value) };
}

/**
 * Volumes, volume mounts and security context of a role: `/dev/shm` in memory, bind mounts as hostPath,
 * volumes as PersistentVolumeClaims, devices as hostPath in a privileged container (Kubernetes cannot pass
 * `--device`).
 */
export function storageOf(role: Role): {
  volumes: K8sObject[];
  volumeMounts: K8sObject[];
  securityContext: K8sObject;
} {
  const volumes: K8sObject[] = [{ name: SHM_VOLUME, emptyDir: { medium: 'Memory' } }];
  const volumeMounts: K8sObject[] = [{ name: SHM_VOLUME, mountPath: '/dev/shm' }];
  const securityContext: K8sObject = {};
  role.mounts.forEach((mount, i) => {
    const name = `mount-${i}`;
    if (mount.type === 'bind') {
      volumes.push({ name, hostPath: { path: mount.srcPath } });
      volumeMounts.push({ name, mountPath: mount.dstPath, readOnly: mount.readOnly });
    } else if (mount.type === 'volume') {
      volumes.push({ name, persistentVolumeClaim: { claimName: mount.src } });
      volumeMounts.push({ name, mountPath: mount.dstPath, readOnly: mount.readOnly });
    } else {
      volumes.push({ name, hostPath: { path: mount.srcPath } });
      const readOnly = !mount.permissions.includes('w') && !mount.permissions.includes('m');
      volumeMounts.push({ name, mountPath: mount.dstPath, readOnly });
      securityContext.privileged = true;
    }
  });
  return { volumes, volumeMounts, securityContext };
}

/** Container ports, named by their `port_map` keys. */
export function portsOf(role: Role): K8sObject[] {
  return Object.entries(role.portMap).map(([name, port]) => ({ name, containerPort: port }));
}
