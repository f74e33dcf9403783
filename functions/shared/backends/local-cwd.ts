/** The local_cwd backend (local mode only): loaded by the container when a request needs a scheduler. */
import {
  createLocalCwdScheduler,
  LOCAL_CWD,
  LocalCwdScheduler,
} from '../../../lib/schedulers/local-cwd/index.js';
import type { SchedulerFactory } from '../../../lib/schedulers/registry.js';
import type { Scheduler } from '../../../lib/schedulers/scheduler.js';
import { ENV } from '../env-names.js';
import type { BackendDeps } from './deps.js';

export { LOCAL_CWD };

/** The local_cwd factory: processes on this machine, state changes through the in-process bus. */
export function localCwdFactory(deps: BackendDeps): SchedulerFactory {
  return (ctx) =>
    createLocalCwdScheduler(ctx, {
      dataDir: deps.config.localDataDir ?? '',
      ...umaskOption(process.env[ENV.localReplicaUmask]),
      onStateChange: async ({ appId, ...transition }) => deps.emitLocalTransition(appId, transition),
    });
}

function umaskOption(octal: string | undefined): { replicaUmask?: number } {
  const umask = octal === undefined ? Number.NaN : Number.parseInt(octal, 8);
  return Number.isInteger(umask) && umask >= 0 && umask <= 0o777 ? { replicaUmask: umask } : {};
}

/** Local mode start-up: the apps `scheduler` (the local_cwd instance) settled or adopted; none for another. */
export async function recoverLocalCwd(scheduler: Scheduler): Promise<string[]> {
  return scheduler instanceof LocalCwdScheduler ? scheduler.recover() : [];
}
