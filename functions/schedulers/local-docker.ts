/**
 * local_docker: TorchX's containers; in local mode with a Docker daemon it runs them. `copy_env` copies from
 * the local server's environment (`config.localHostEnv`: the user's own shell; never AWS_* or TXS_*); in the
 * deployed stack it copies nothing and runs nothing.
 */
import { existsSync } from 'node:fs';
import { DockerEngine, LocalDockerScheduler } from '../../lib/schedulers/local-docker/index.js';
import type { SchedulerFactory } from '../../lib/schedulers/registry.js';
import type { SchedulerDeps } from './scheduler-module.js';

/**
 * The Docker Engine socket local mode uses: a `unix://` DOCKER_HOST, else /var/run/docker.sock; undefined
 * when it does not exist (no daemon) or DOCKER_HOST is not a Unix socket.
 */
export function dockerSocketFromEnv(env: Readonly<Record<string, string | undefined>>): string | undefined {
  const host = env.DOCKER_HOST;
  if (host && !host.startsWith('unix://')) return undefined;
  const path = host ? host.slice('unix://'.length) : '/var/run/docker.sock';
  return existsSync(path) ? path : undefined;
}

/** The local_docker factory: runs containers only in local mode (where the server's environment is given). */
export function create(deps: SchedulerDeps): SchedulerFactory {
  return (ctx) => {
    const hostEnv = deps.config.localHostEnv;
    if (hostEnv === undefined) return new LocalDockerScheduler(ctx);
    const socket = dockerSocketFromEnv(hostEnv);
    return new LocalDockerScheduler(ctx, {
      hostEnv,
      ...(socket ? { engine: new DockerEngine(socket) } : {}),
    });
  };
}
