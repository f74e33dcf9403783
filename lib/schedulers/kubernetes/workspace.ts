/**
 * A Kubernetes pod that runs in a workspace (`kubernetes` and `kubernetes_mcad` alike): an init container
 * copies the archive from S3 into an `emptyDir` volume with the pod's own credentials (its service account,
 * through IRSA or EKS Pod Identity), then the role's container unpacks it over its image's working directory
 * and runs the entrypoint there ({@link unpackThenRun}). The role's image needs only `sh` and `tar`; nothing
 * is fetched with credentials minted at submission, so a pod that waits in a queue still reads the archive.
 *
 * @module
 */
import type { JobWorkspace, Role } from '../../specs/index.js';
import { s3ArchiveOf } from '../s3-workspace.js';
import {
  FETCH_CONTAINER_NAME,
  fetchArchiveArgs,
  mountedArchivePath,
  unpackThenRun,
  WORKSPACE_MOUNT_PATH,
  WORKSPACE_VOLUME,
} from '../workspace.js';
import type { K8sObject } from './pod.js';

/** The resources the init container asks for: the role's CPU and memory (never its GPUs or devices). */
const FETCH_RESOURCES = ['cpu', 'memory'] as const;

/** A workspace as the pod builders take it: the archive's `s3://` URI, its hash, and the fetch image. */
export interface KubeWorkspace {
  uri: string;
  sha256: string;
  fetchImage: string;
}

/**
 * The pod-side form of a workspace.
 *
 * @throws ValidationError naming `workspace` when the archive is not an `s3://bucket/key` object (a local
 *   server keeps archives on its own disk, which a cluster's pods cannot read).
 */
export function kubeWorkspaceOf(
  workspace: Readonly<JobWorkspace>,
  backend: string,
  fetchImage: string,
): KubeWorkspace {
  return { uri: s3ArchiveOf(workspace, backend).uri, sha256: workspace.sha256, fetchImage };
}

/** The parts of a role's pod that a workspace changes. */
export interface PodRun {
  /** The role's container's command. */
  command: string[];
  /** The role's container's mounts. */
  volumeMounts: K8sObject[];
  /** The pod's volumes. */
  volumes: K8sObject[];
  /** The pod's init containers: only with a workspace. */
  initContainers?: K8sObject[];
}

/**
 * How a role's pod runs: without a workspace, the role's command, mounts and volumes as TorchX makes them;
 * with one, also an `emptyDir`, an init container that copies the archive into it, its read-only mount in
 * the role's container, and the command that unpacks it into the working directory before exec'ing the
 * entrypoint. The init container asks for the role's CPU and memory: it runs before the role's container,
 * so the pod's effective request is unchanged, and a namespace whose quota requires requests and limits
 * admits it.
 */
export function podRun(
  role: Pick<Role, 'entrypoint' | 'args'>,
  resources: { limits: Record<string, string>; requests: Record<string, string> },
  storage: { volumes: K8sObject[]; volumeMounts: K8sObject[] },
  workspace: Readonly<KubeWorkspace> | undefined,
): PodRun {
  if (workspace === undefined) return { command: [role.entrypoint, ...role.args], ...storage };
  const archive = mountedArchivePath(workspace.sha256);
  const pick = (values: Record<string, string>) =>
    Object.fromEntries(FETCH_RESOURCES.flatMap((name) => (name in values ? [[name, values[name]]] : [])));
  return {
    command: unpackThenRun(archive, role.entrypoint, role.args),
    volumeMounts: [
      ...storage.volumeMounts,
      { name: WORKSPACE_VOLUME, mountPath: WORKSPACE_MOUNT_PATH, readOnly: true },
    ],
    volumes: [...storage.volumes, { name: WORKSPACE_VOLUME, emptyDir: {} }],
    initContainers: [
      {
        name: FETCH_CONTAINER_NAME,
        image: workspace.fetchImage,
        command: ['aws', ...fetchArchiveArgs(workspace.uri, workspace.sha256)],
        resources: { limits: pick(resources.limits), requests: pick(resources.requests) },
        volumeMounts: [{ name: WORKSPACE_VOLUME, mountPath: WORKSPACE_MOUNT_PATH }],
      },
    ],
  };
}
