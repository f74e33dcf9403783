/**
 * Pure translation of an AppDef into the containers TorchX's `local_docker` scheduler starts
 * (`DockerScheduler._submit_dryrun`): one container per replica on the `torchx` network, with the image,
 * command, env, TorchX's labels, mounts, devices, memory, CPU and GPU requests and restart policy, in
 * docker-py's `containers.run` keyword arguments.
 *
 * @module
 */
import {
  type AppDef,
  applyMacros,
  compileFnmatch,
  type JobWorkspace,
  type Mount,
  makeUnique,
} from '../../specs/index.js';
import { deviceMountsOf } from '../aws-batch/container.js';
import { type ImagesToPush, withPushedImages } from '../images.js';
import { TORCHX_LABELS, TORCHX_VERSION_TAG_VALUE } from '../torchx-version.js';
import { mountedArchivePath, unpackThenRun } from '../workspace.js';
import type { LocalDockerOpts } from './options.js';

/** One container to start: image, command and docker-py's `containers.run` keyword arguments. */
export interface DockerContainerSpec {
  image: string;
  command: string[];
  kwargs: Record<string, unknown>;
}

/** The native request of `local_docker`. */
export interface LocalDockerRequest {
  appId: string;
  containers: DockerContainerSpec[];
  /** Local images and the repository and tag TorchX would push them to. */
  imagesToPush: ImagesToPush;
}

/** The Docker network every container joins. */
export const DOCKER_NETWORK = 'torchx';
/** Label keys TorchX puts on containers (version, app id, role name, replica id). */
export const DOCKER_LABELS = TORCHX_LABELS;
/** The `torchx.pytorch.org/version` label value. */
export const DOCKER_TORCHX_VERSION = TORCHX_VERSION_TAG_VALUE;

/**
 * Environment variables `copy_env` never copies, whatever the pattern: the service's own AWS credentials and
 * configuration. Deliberate difference from TorchX (which copied from the user's shell); see
 * docs/schedulers/local_docker.md.
 */
export const NEVER_COPIED_ENV = /^(AWS_|TXS_)/;

function baseEnv(
  cfg: LocalDockerOpts,
  hostEnv: Readonly<Record<string, string | undefined>>,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const pattern of cfg.copy_env ?? []) {
    const matches = compileFnmatch(pattern);
    for (const [key, value] of Object.entries(hostEnv)) {
      if (value !== undefined && matches(key) && !NEVER_COPIED_ENV.test(key)) env[key] = value;
    }
  }
  return { ...env, ...(cfg.env ?? {}) };
}

function mountsOf(mounts: readonly Mount[]): { mounts: Record<string, unknown>[]; devices: string[] } {
  const result: Record<string, unknown>[] = [];
  const devices: string[] = [];
  for (const mount of mounts) {
    if (mount.type === 'bind') {
      result.push({ Target: mount.dstPath, Source: mount.srcPath, Type: 'bind', ReadOnly: mount.readOnly });
    } else if (mount.type === 'volume') {
      result.push({ Target: mount.dstPath, Source: mount.src, Type: 'volume', ReadOnly: mount.readOnly });
    } else {
      devices.push(`${mount.srcPath}:${mount.dstPath}:${mount.permissions}`);
    }
  }
  return { mounts: result, devices };
}

/**
 * A workspace as the containers take it: the archive on the Docker host (the server's machine), mounted
 * read-only into every container and unpacked over the image's working directory before the entrypoint.
 */
export type DockerWorkspace = Pick<JobWorkspace, 'sha256' | 'archive'>;

/**
 * The containers for `app` (TorchX `DockerScheduler._submit_dryrun`); with a workspace, each mounts the
 * archive read-only and its command unpacks it into the working directory, then runs the entrypoint there.
 *
 * @param hostEnv the environment `copy_env` copies from (never `AWS_*` or `TXS_*`).
 */
export function dockerContainers(
  app: AppDef,
  appId: string,
  cfg: LocalDockerOpts,
  hostEnv: Readonly<Record<string, string | undefined>>,
  workspace?: DockerWorkspace,
): DockerContainerSpec[] {
  const archive = workspace && mountedArchivePath(workspace.sha256);
  const defaultEnv = baseEnv(cfg, hostEnv);
  const rank0Name = `${appId.slice(-30)}-${(app.roles[0]?.name ?? '').slice(0, 30)}-0`;
  const containers: DockerContainerSpec[] = [];
  for (const role of app.roles) {
    const { mounts, devices } = mountsOf([...role.mounts, ...deviceMountsOf(role.resource.devices)]);
    if (workspace && archive) {
      mounts.push({ Target: archive, Source: workspace.archive, Type: 'bind', ReadOnly: true });
    }
    for (let replicaId = 0; replicaId < role.numReplicas; replicaId++) {
      const replicaRole = applyMacros(role, {
        imgRoot: '',
        appId,
        replicaId: String(replicaId),
        rank0Env: 'TORCHX_RANK0_HOST',
      });
      const name = `${appId.slice(-30)}-${role.name.slice(0, 30)}-${replicaId}`.replace(/^[^a-zA-Z0-9]+/, '');
      const kwargs: Record<string, unknown> = {
        name,
        environment: { ...defaultEnv, ...replicaRole.env, TORCHX_RANK0_HOST: rank0Name },
        labels: {
          [DOCKER_LABELS.version]: DOCKER_TORCHX_VERSION,
          [DOCKER_LABELS.appId]: appId,
          [DOCKER_LABELS.roleName]: role.name,
          [DOCKER_LABELS.replicaId]: String(replicaId),
        },
        hostname: name,
        privileged: cfg.privileged,
        network: DOCKER_NETWORK,
        mounts,
        devices,
      };
      if (replicaRole.maxRetries > 0) {
        kwargs.restart_policy = { Name: 'on-failure', MaximumRetryCount: replicaRole.maxRetries };
      }
      const { memMB, cpu, gpu } = replicaRole.resource;
      if (memMB >= 0) {
        kwargs.mem_limit = `${Math.trunc(memMB)}m`;
        kwargs.shm_size = `${Math.trunc(memMB)}m`;
      }
      if (cpu >= 0) kwargs.nano_cpus = Math.trunc(cpu * 1e9);
      if (gpu > 0) {
        kwargs.device_requests = [
          { Driver: '', Count: gpu, DeviceIDs: [], Capabilities: [['compute', 'utility']], Options: {} },
        ];
      }
      containers.push({
        image: replicaRole.image,
        command: archive
          ? unpackThenRun(archive, replicaRole.entrypoint, replicaRole.args)
          : [replicaRole.entrypoint, ...replicaRole.args],
        kwargs,
      });
    }
  }
  return containers;
}

/** Makes the app id from the app's name (TorchX `make_unique`); injectable so tests are deterministic. */
export type DockerUniqueNamer = (name: string) => string;

/**
 * Translates an app into the `local_docker` request, every container starting in `workspace` when one is
 * given. Pure (the host environment is given).
 */
export function translateLocalDockerApp(
  app: AppDef,
  cfg: LocalDockerOpts,
  hostEnv: Readonly<Record<string, string | undefined>> = {},
  uniqueNamer: DockerUniqueNamer = (name) => makeUnique(name),
  workspace?: DockerWorkspace,
): { app: AppDef; request: LocalDockerRequest } {
  const pushed = withPushedImages(app, cfg.image_repo);
  const appId = uniqueNamer(app.name);
  const containers = dockerContainers(pushed.app, appId, cfg, hostEnv, workspace);
  return { app: pushed.app, request: { appId, containers, imagesToPush: pushed.imagesToPush } };
}
