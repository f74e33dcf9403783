/** local_cwd (local mode only): processes on this machine, state changes through the in-process bus. */
import {
  createLocalCwdScheduler,
  LOCAL_CWD,
  LocalCwdScheduler,
  minimalEnv,
} from '../../lib/schedulers/local-cwd/index.js';
import type { SchedulerFactory } from '../../lib/schedulers/registry.js';
import type { Scheduler } from '../../lib/schedulers/scheduler.js';
import type { SchedulerDeps } from './scheduler-module.js';

export { LOCAL_CWD };

/** The local_cwd factory: processes on this machine, state changes through the in-process bus. */
export function create(deps: SchedulerDeps): SchedulerFactory {
  return (ctx) =>
    createLocalCwdScheduler(ctx, {
      dataDir: deps.config.localDataDir ?? '',
      ...(deps.config.localReplicaUmask === undefined ? {} : { replicaUmask: deps.config.localReplicaUmask }),
      ...(deps.config.localHostEnv === undefined ? {} : { env: minimalEnv(deps.config.localHostEnv) }),
      onStateChange: async ({ appId, ...transition }) => deps.emitLocalTransition(appId, transition),
    });
}

/** Local mode start-up: the apps `scheduler` (the local_cwd instance) settled or adopted; none for another. */
export async function recoverLocalCwd(scheduler: Scheduler): Promise<string[]> {
  return scheduler instanceof LocalCwdScheduler ? scheduler.recover() : [];
}
