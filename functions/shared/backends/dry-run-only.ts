/**
 * The schedulers ported for their dry runs (`lsf`, `kubernetes`, `kubernetes_mcad`, `local_docker`): no client,
 * no configuration; running fails with an explanation (lib/schedulers/dry-run-only.ts).
 */
import { KubernetesScheduler } from '../../../lib/schedulers/kubernetes/index.js';
import { KubernetesMcadScheduler } from '../../../lib/schedulers/kubernetes-mcad/index.js';
import { LocalDockerScheduler } from '../../../lib/schedulers/local-docker/index.js';
import { LsfScheduler } from '../../../lib/schedulers/lsf/index.js';
import type { SchedulerFactory } from '../../../lib/schedulers/registry.js';
import { ENV } from '../env-names.js';
import type { BackendDeps } from './deps.js';

/** The lsf factory (dry runs: TorchX's bsub script). */
export function lsfFactory(_deps: BackendDeps): SchedulerFactory {
  return (ctx) => new LsfScheduler(ctx);
}

/** The kubernetes factory (dry runs: TorchX's Volcano Job). */
export function kubernetesFactory(_deps: BackendDeps): SchedulerFactory {
  return (ctx) => new KubernetesScheduler(ctx);
}

/** The kubernetes_mcad factory (dry runs: TorchX's AppWrapper). */
export function kubernetesMcadFactory(_deps: BackendDeps): SchedulerFactory {
  return (ctx) => new KubernetesMcadScheduler(ctx);
}

/**
 * The local_docker factory (dry runs: TorchX's containers). `copy_env` copies from this process's environment
 * in local mode only (the user's own shell; never AWS_* or TXS_*); in the deployed stack it copies nothing.
 */
export function localDockerFactory(_deps: BackendDeps): SchedulerFactory {
  return (ctx) =>
    new LocalDockerScheduler(ctx, process.env[ENV.localDataDir] ? { hostEnv: { ...process.env } } : {});
}
