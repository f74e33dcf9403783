/**
 * The `local_docker` scheduler: TorchX's Docker scheduler's run options and container specifications. Dry
 * runs always; with a Docker Engine (local mode, a daemon on its Unix socket) it pulls, creates the `torchx`
 * network, starts, describes, lists, stops the containers and reads their logs, as TorchX does. See
 * docs/schedulers/local-docker.md.
 *
 * @module
 */
import { isAbsolute } from 'node:path';
import {
  type AppDef,
  AppDryRunInfo,
  type AppState,
  type DescribeAppResponse,
  isTerminal,
  type JobWorkspace,
  type ListAppResponse,
  makeDescribeAppResponse,
  makeRole,
  type RoleStatus,
  type RunOpts,
  ValidationError,
} from '../../specs/index.js';
import { UnknownReplicaError } from '../errors.js';
import type { LogPage, LogPageRequest } from '../logs.js';
import type { SchedulerCapabilities, SchedulerContext } from '../scheduler.js';
import { TranslatingScheduler } from '../translating.js';
import type { DockerEngine, EngineContainerSummary } from './engine.js';
import { type LocalDockerOpts, localDockerRunOpts } from './options.js';
import { containerStateOf } from './state.js';
import {
  DOCKER_LABELS,
  DOCKER_NETWORK,
  type DockerUniqueNamer,
  type LocalDockerRequest,
  translateLocalDockerApp,
} from './translate.js';

/** Construction options of {@link LocalDockerScheduler}. */
export interface LocalDockerSchedulerOptions {
  /** The environment `copy_env` copies from; empty by default (nothing is copied). */
  hostEnv?: Readonly<Record<string, string | undefined>>;
  /** Makes the app id; TorchX's `make_unique` by default. */
  uniqueNamer?: DockerUniqueNamer;
  /** The Docker Engine; without it the scheduler answers dry runs only. */
  engine?: DockerEngine;
}

/** Why `local_docker` starts nothing when no Docker Engine is reachable. */
export const LOCAL_DOCKER_NOT_SUBMITTED =
  'no Docker Engine is reachable (local mode needs a daemon on /var/run/docker.sock or a unix:// DOCKER_HOST); ' +
  'run `txs run --dryrun -s local_docker ...` to see the containers TorchX would start, or run the app with local_cwd.';

/** The state of a listed container: exited ones by the exit code in Docker's status text. */
function summaryState(c: EngineContainerSummary): AppState {
  const exited = /^Exited \((-?\d+)\)/.exec(c.Status ?? '');
  return containerStateOf(c.State ?? '', exited ? Number(exited[1]) : undefined);
}

/** TorchX's app state from its containers: terminal when all are (SUCCEEDED only if all did), else the first live one's. */
export function dockerAppState(states: readonly AppState[]): AppState {
  if (states.every((s) => isTerminal(s)))
    return states.every((s) => s === 'SUCCEEDED') ? 'SUCCEEDED' : 'FAILED';
  return states.find((s) => !isTerminal(s)) ?? 'UNKNOWN';
}

/**
 * The `local_docker` scheduler (dry runs only).
 *
 * @example
 * ```ts
 * new LocalDockerScheduler({ sessionName: 'torchx' }).submitDryrun(app, {}).request.containers;
 * ```
 */
export class LocalDockerScheduler extends TranslatingScheduler<LocalDockerOpts, LocalDockerRequest> {
  private readonly hostEnv: Readonly<Record<string, string | undefined>>;
  private readonly uniqueNamer: DockerUniqueNamer | undefined;
  private readonly engine: DockerEngine | undefined;

  constructor(context: SchedulerContext, options: LocalDockerSchedulerOptions = {}) {
    super('local_docker', context, LOCAL_DOCKER_NOT_SUBMITTED);
    this.hostEnv = options.hostEnv ?? {};
    this.uniqueNamer = options.uniqueNamer;
    this.engine = options.engine;
  }

  override capabilities(): SchedulerCapabilities {
    const base = super.capabilities();
    return this.engine ? { ...base, cancel: true, logs: true, retries: true } : base;
  }

  override appIdOf(dryrun: AppDryRunInfo<LocalDockerRequest>): string {
    return this.engine ? dryrun.request.appId : super.appIdOf(dryrun);
  }

  /** Pulls the images (falling back to local ones), ensures the network, starts every container. */
  override async schedule(dryrun: AppDryRunInfo<LocalDockerRequest>): Promise<string> {
    const { engine } = this;
    if (!engine) return super.schedule(dryrun);
    const images = new Set(dryrun.request.containers.map((c) => c.image));
    for (const image of images) if (!image.startsWith('sha256:')) await engine.pull(image);
    await engine.ensureNetwork(DOCKER_NETWORK);
    const started: string[] = [];
    try {
      for (const container of dryrun.request.containers) started.push(await engine.run(container));
    } catch (error) {
      await Promise.allSettled(started.map((id) => engine.stop(id))); // no half-started app left running
      throw error;
    }
    return dryrun.request.appId;
  }

  private containers(appId: string, ...labels: string[]): Promise<EngineContainerSummary[]> {
    return (this.engine as DockerEngine).list([`${DOCKER_LABELS.appId}=${appId}`, ...labels]);
  }

  override async describe(appId: string): Promise<DescribeAppResponse | undefined> {
    const { engine } = this;
    if (!engine) return super.describe(appId);
    const containers = await this.containers(appId);
    if (containers.length === 0) return undefined;
    const statuses = new Map<string, RoleStatus>();
    const images = new Map<string, string>();
    const states: AppState[] = [];
    for (const c of containers) {
      const role = c.Labels?.[DOCKER_LABELS.roleName] ?? '';
      const inspected = c.State === 'exited' ? await engine.inspect(c.Id) : undefined;
      const state = inspected ? containerStateOf('exited', inspected.exitCode) : summaryState(c);
      states.push(state);
      const roleStatus = statuses.get(role) ?? { role, replicas: [] };
      roleStatus.replicas.push({
        id: Number(c.Labels?.[DOCKER_LABELS.replicaId] ?? 0),
        role,
        state,
        hostname: (c.Names?.[0] ?? '').replace(/^\//, ''),
        structuredErrorMsg: '<NONE>',
        ...(inspected ? { exitCode: inspected.exitCode } : {}),
      });
      statuses.set(role, roleStatus);
      images.set(role, c.Image ?? '');
    }
    return makeDescribeAppResponse({
      appId,
      state: dockerAppState(states),
      rolesStatuses: [...statuses.values()],
      roles: [...statuses.values()].map((r) =>
        makeRole({ name: r.role, image: images.get(r.role) ?? '', numReplicas: r.replicas.length }),
      ),
    });
  }

  /** The apps TorchX started on this daemon (containers with TorchX's version label), by app id. */
  override async list(): Promise<ListAppResponse[]> {
    const { engine } = this;
    if (!engine) return super.list();
    const byApp = new Map<string, AppState[]>();
    for (const c of await engine.list([DOCKER_LABELS.version])) {
      const appId = c.Labels?.[DOCKER_LABELS.appId];
      if (appId === undefined) continue;
      byApp.set(appId, [...(byApp.get(appId) ?? []), summaryState(c)]);
    }
    return [...byApp.entries()].map(([appId, states]) => ({
      appId,
      state: dockerAppState(states),
      appHandle: '<NOT_SET>',
      name: appId,
    }));
  }

  protected override async cancelExisting(appId: string, reason: string): Promise<void> {
    const { engine } = this;
    if (!engine) return super.cancelExisting(appId, reason);
    for (const c of await this.containers(appId)) await engine.stop(c.Id);
  }

  protected override async fetchLogPage(appId: string, request: LogPageRequest): Promise<LogPage> {
    const { engine } = this;
    if (!engine) return super.fetchLogPage(appId, request);
    const replica = request.replica ?? 0;
    const [container] = await this.containers(
      appId,
      `${DOCKER_LABELS.roleName}=${request.role}`,
      `${DOCKER_LABELS.replicaId}=${replica}`,
    );
    if (!container) throw new UnknownReplicaError(request.role, replica, 0);
    const streams = request.streams ?? 'combined';
    const text = await engine.logs(container.Id, {
      stdout: streams !== 'stderr',
      stderr: streams !== 'stdout',
      ...(request.since ? { since: request.since.getTime() / 1000 } : {}),
    });
    return { lines: text === '' ? [] : text.replace(/\n$/, '').split('\n'), caughtUp: true };
  }

  runOpts(): RunOpts {
    return localDockerRunOpts();
  }

  /**
   * Takes a workspace kept on this machine (the local server's archives), which the Docker daemon mounts
   * into each container.
   *
   * @throws ValidationError naming `workspace` for any other archive (an `s3://` object).
   */
  override checkWorkspace(workspace: JobWorkspace): void {
    if (!isAbsolute(workspace.archive)) {
      throw ValidationError.forField(
        'workspace',
        `local_docker mounts the workspace archive from this machine, and this server keeps it at ` +
          `'${workspace.archive}': run with a workspace against the local server, or without one ` +
          '(txs run --workspace "")',
      );
    }
  }

  protected translate(
    app: AppDef,
    cfg: LocalDockerOpts,
    workspace?: JobWorkspace,
  ): AppDryRunInfo<LocalDockerRequest> {
    const translated = translateLocalDockerApp(app, cfg, this.hostEnv, this.uniqueNamer, workspace);
    return new AppDryRunInfo(this.backend, translated.app, cfg, translated.request);
  }
}
