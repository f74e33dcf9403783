/** The local_cwd backend (local mode only): loaded by the container when a request needs a scheduler. */
import { createLocalCwdScheduler } from '../../../lib/schedulers/local-cwd/index.js';
import type { SchedulerFactory } from '../../../lib/schedulers/registry.js';
import { ENV } from '../env-names.js';
import type { BackendDeps } from './deps.js';

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
