/**
 * A Kubernetes pod that runs in a workspace (`kubernetes` and `kubernetes_mcad` alike): an init container
 * copies the archive from S3 into an `emptyDir` volume with the pod's own credentials (its service account,
 * through IRSA or EKS Pod Identity), then the role's container unpacks it over its image's working directory
 * and runs the entrypoint there ({@link unpackThenRun}). The role's image needs only `sh` and `tar`; nothing
 * is fetched with credentials minted at submission, so a pod that waits in a queue still reads the archive.
 *
 * @module
 */
import { type JobWorkspace, ValidationError } from '../../specs/index.js';
import { isS3Uri } from '../aws-names.js';
import { mountedArchivePath, unpackThenRun, WORKSPACE_MOUNT_PATH } from '../workspace.js';
import type { K8sObject } from './pod.js';

/** The pod volume the archive is copied into. */
export const WORKSPACE_VOLUME = 'txs-workspace';
/** The init container that copies the archive from S3. */
export const FETCH_CONTAINER_NAME = 'workspace-fetch';
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
  const uri = workspace.archive;
  if (!isS3Uri(uri) || !/^s3:\/\/[^/]+\/./.test(uri)) {
    throw ValidationError.forField(
      'workspace',
      `a ${backend} pod copies its workspace from S3 with its service account, and this server keeps the ` +
        `archive at '${uri}', which the cluster cannot reach: run with a workspace against a deployed stack ` +
        `(its workspace bucket), or without one (txs run --workspace "")`,
    );
  }
  return { uri, sha256: workspace.sha256, fetchImage };
}

/** What a pod of a role gains from a workspace. */
export interface WorkspacePodParts {
  /** The `emptyDir` volume the archive is copied into. */
  volume: K8sObject;
  /** The init container that copies it (`aws s3 cp`). */
  initContainer: K8sObject;
  /** The volume's read-only mount in the role's container. */
  mount: K8sObject;
  /** The role's command: unpack the archive into the working directory, then exec the entrypoint. */
  command: string[];
}

/**
 * The volume, init container, mount and command that make a role's pod start in the workspace. The init
 * container asks for the role's CPU and memory: it runs before the role's container, so the pod's effective
 * request is unchanged, and a namespace whose quota requires requests and limits admits it.
 */
export function workspacePodParts(
  workspace: Readonly<KubeWorkspace>,
  entrypoint: string,
  args: readonly string[],
  resources: { limits: Record<string, string>; requests: Record<string, string> },
): WorkspacePodParts {
  const archive = mountedArchivePath(workspace.sha256);
  const pick = (values: Record<string, string>) =>
    Object.fromEntries(FETCH_RESOURCES.flatMap((name) => (name in values ? [[name, values[name]]] : [])));
  return {
    volume: { name: WORKSPACE_VOLUME, emptyDir: {} },
    initContainer: {
      name: FETCH_CONTAINER_NAME,
      image: workspace.fetchImage,
      command: ['aws', 's3', 'cp', '--only-show-errors', workspace.uri, archive],
      resources: { limits: pick(resources.limits), requests: pick(resources.requests) },
      volumeMounts: [{ name: WORKSPACE_VOLUME, mountPath: WORKSPACE_MOUNT_PATH }],
    },
    mount: { name: WORKSPACE_VOLUME, mountPath: WORKSPACE_MOUNT_PATH, readOnly: true },
    command: unpackThenRun(archive, entrypoint, args),
  };
}
