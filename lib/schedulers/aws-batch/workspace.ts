/**
 * A role's node range when the app runs in a workspace: a multi-container ECS task (`ecsProperties`) whose
 * first, non-essential container copies the archive from S3 into a task volume with the job role's
 * credentials, and whose main container — the role's container as without a workspace — starts once that copy
 * succeeded, unpacks the archive over its image's working directory and runs the entrypoint there. The user's
 * image needs only `sh` and `tar`; nothing fetches with credentials minted at submission, so a job waiting in
 * the queue for days still reads the archive.
 *
 * @module
 */
import type {
  ContainerProperties,
  EcsTaskProperties,
  KeyValuePair,
  NodePropertyOverride,
  NodeRangeProperty,
  TaskContainerProperties,
} from '@aws-sdk/client-batch';
import { type JobWorkspace, ValidationError } from '../../specs/index.js';
import { type S3Archive, s3ArchiveOf } from '../s3-workspace.js';
import {
  DEFAULT_WORKSPACE_FETCH_IMAGE,
  FETCH_CONTAINER_NAME,
  fetchArchiveArgs,
  mountedArchivePath,
  unpackThenRun,
  WORKSPACE_MOUNT_PATH,
  WORKSPACE_VOLUME,
} from '../workspace.js';

/** The role's own container (its logs are the replica's logs). */
export const MAIN_CONTAINER_NAME = 'main';

/** The workspace of a Batch translation: the archive's S3 object and hash, and the fetch container's image. */
export interface BatchWorkspace {
  archive: S3Archive;
  sha256: string;
  fetchImage: string;
}

/**
 * The workspace of a Batch translation, from a {@link JobWorkspace}.
 *
 * @throws ValidationError naming `workspace` when the archive is not in S3.
 */
export function batchWorkspaceOf(
  workspace: Readonly<JobWorkspace>,
  fetchImage: string = DEFAULT_WORKSPACE_FETCH_IMAGE,
): BatchWorkspace {
  return { archive: s3ArchiveOf(workspace, 'aws_batch'), sha256: workspace.sha256, fetchImage };
}

/**
 * Refuses a workspace run without a job role: the fetch container reads the archive with the task's role,
 * and a task without one has no credentials to read S3 with.
 *
 * @throws ValidationError naming `cfg.job_role_arn`.
 */
export function checkWorkspaceJobRole(jobRoleArn: string | null | undefined, archive: S3Archive): void {
  if (jobRoleArn) return;
  throw ValidationError.forField(
    'cfg.job_role_arn',
    `a job with a workspace reads its archive from S3 with its job role, and no job role is set: set ` +
      `job_role_arn to a role that may s3:GetObject on ${archive.uri} (e.g. -cfg ` +
      `job_role_arn=arn:aws:iam::123456789012:role/txs-job), or run without a workspace (txs run --workspace "")`,
  );
}

/** The path of the archive in the task volume. */
export function archivePathOf(workspace: Readonly<BatchWorkspace>): string {
  return mountedArchivePath(workspace.sha256);
}

/** The non-essential container that copies the archive into the task volume (`aws s3 cp`). */
function fetchContainerOf(
  workspace: Readonly<BatchWorkspace>,
  main: ContainerProperties,
): TaskContainerProperties {
  const fetch: TaskContainerProperties = {
    name: FETCH_CONTAINER_NAME,
    essential: false,
    image: workspace.fetchImage,
    command: fetchArchiveArgs(workspace.archive.uri, workspace.sha256),
    mountPoints: [{ sourceVolume: WORKSPACE_VOLUME, containerPath: WORKSPACE_MOUNT_PATH, readOnly: false }],
  };
  if (main.logConfiguration !== undefined) fetch.logConfiguration = main.logConfiguration;
  return fetch;
}

/** A role's node range in a workspace, and its main container (where per-run environment goes). */
export interface WorkspaceNodeRange {
  range: NodeRangeProperty;
  main: TaskContainerProperties;
}

/**
 * The node range of a role whose container (as {@link containerOf} builds it, without a workspace) runs in
 * `workspace`: `ecsProperties` with one task whose role and volumes are the container's (`jobRoleArn` →
 * `taskRoleArn`, `executionRoleArn`, `volumes` plus {@link WORKSPACE_VOLUME}), the fetch container, then the
 * main container — the container's image, resources, environment, mounts, Linux parameters, ulimits, log
 * configuration and `privileged`, the workspace volume mounted read-only, `dependsOn` the fetch with
 * condition `SUCCESS`, and its command wrapped by {@link unpackThenRun}. The container's `instanceType`
 * becomes the range's `instanceTypes`.
 */
export function workspaceNodeRange(
  targetNodes: string,
  container: ContainerProperties,
  workspace: Readonly<BatchWorkspace>,
): WorkspaceNodeRange {
  const [entrypoint = '', ...args] = container.command ?? [];
  const main: TaskContainerProperties = {
    name: MAIN_CONTAINER_NAME,
    essential: true,
    image: container.image,
    command: unpackThenRun(archivePathOf(workspace), entrypoint, args),
    environment: container.environment ?? [],
    privileged: container.privileged ?? false,
    resourceRequirements: container.resourceRequirements ?? [],
    linuxParameters: container.linuxParameters ?? {},
    logConfiguration: container.logConfiguration ?? { logDriver: 'awslogs' },
    mountPoints: [
      ...(container.mountPoints ?? []),
      { sourceVolume: WORKSPACE_VOLUME, containerPath: WORKSPACE_MOUNT_PATH, readOnly: true },
    ],
    dependsOn: [{ containerName: FETCH_CONTAINER_NAME, condition: 'SUCCESS' }],
  };
  if (container.ulimits !== undefined) main.ulimits = container.ulimits;
  const task: EcsTaskProperties = {
    containers: [fetchContainerOf(workspace, container), main],
    volumes: [...(container.volumes ?? []), { name: WORKSPACE_VOLUME }],
  };
  if (container.jobRoleArn) task.taskRoleArn = container.jobRoleArn;
  if (container.executionRoleArn) task.executionRoleArn = container.executionRoleArn;
  const range: NodeRangeProperty = { targetNodes, ecsProperties: { taskProperties: [task] } };
  if (container.instanceType !== undefined) range.instanceTypes = [container.instanceType];
  return { range, main };
}

/** A SubmitJob node override setting per-run environment values on a workspace range's main container. */
export function workspaceEnvironmentOverride(
  targetNodes: string,
  environment: KeyValuePair[],
): NodePropertyOverride {
  return {
    targetNodes,
    ecsPropertiesOverride: {
      taskProperties: [{ containers: [{ name: MAIN_CONTAINER_NAME, environment }] }],
    },
  };
}
