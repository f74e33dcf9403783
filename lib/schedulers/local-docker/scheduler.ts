/**
 * The `local_docker` scheduler: TorchX's Docker scheduler's run options and container specifications, for
 * dry runs. Starting the containers through the Docker Engine API is not wired yet: see
 * docs/schedulers/local_docker.md.
 *
 * @module
 */
import { type AppDef, AppDryRunInfo, type RunOpts } from '../../specs/index.js';
import { DryRunOnlyScheduler } from '../dry-run-only.js';
import type { SchedulerContext } from '../scheduler.js';
import { type LocalDockerOpts, localDockerRunOpts } from './options.js';
import { type DockerUniqueNamer, type LocalDockerRequest, translateLocalDockerApp } from './translate.js';

/** Construction options of {@link LocalDockerScheduler}. */
export interface LocalDockerSchedulerOptions {
  /** The environment `copy_env` copies from; empty by default (nothing is copied). */
  hostEnv?: Readonly<Record<string, string | undefined>>;
  /** Makes the app id; TorchX's `make_unique` by default. */
  uniqueNamer?: DockerUniqueNamer;
}

/** Why `local_docker` starts nothing yet. */
export const LOCAL_DOCKER_NOT_SUBMITTED =
  'the Docker Engine client is not wired in this release; run `txs dryrun -s local_docker ...` to see the ' +
  'containers TorchX would start, or run the app with local_cwd.';

/**
 * The `local_docker` scheduler (dry runs only).
 *
 * @example
 * ```ts
 * new LocalDockerScheduler({ sessionName: 'torchx' }).submitDryrun(app, {}).request.containers;
 * ```
 */
export class LocalDockerScheduler extends DryRunOnlyScheduler<LocalDockerOpts, LocalDockerRequest> {
  private readonly hostEnv: Readonly<Record<string, string | undefined>>;
  private readonly uniqueNamer: DockerUniqueNamer | undefined;

  constructor(context: SchedulerContext, options: LocalDockerSchedulerOptions = {}) {
    super('local_docker', context, LOCAL_DOCKER_NOT_SUBMITTED);
    this.hostEnv = options.hostEnv ?? {};
    this.uniqueNamer = options.uniqueNamer;
  }

  runOpts(): RunOpts {
    return localDockerRunOpts();
  }

  protected translate(app: AppDef, cfg: LocalDockerOpts): AppDryRunInfo<LocalDockerRequest> {
    const translated = translateLocalDockerApp(app, cfg, this.hostEnv, this.uniqueNamer);
    return new AppDryRunInfo(this.backend, translated.app, cfg, translated.request);
  }
}
