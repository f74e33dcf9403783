/**
 * The loaders of the SDK-free backends (local_cwd, slurm, local_docker, lsf, kubernetes, kubernetes_mcad):
 * one module serves both dry runs and runs, so the Runner's and the Planner's tables both list these. They
 * are not the deployed stack's default schedulers: they load, all together, when a request first names one.
 */
import type { KnownScheduler } from '../config.js';
import type { BackendFactory } from './deps.js';

const load = () => import('./sdk-free-backends.js');

/** The SDK-free backends' loaders. */
export const SDK_FREE_MODULES: Readonly<
  Record<Exclude<KnownScheduler, 'aws_batch' | 'aws_sagemaker'>, () => Promise<BackendFactory>>
> = {
  local_cwd: async () => (await load()).localCwdFactory,
  slurm: async () => {
    const { slurmFactory } = await load();
    return () => slurmFactory();
  },
  local_docker: async () => (await load()).localDockerFactory,
  lsf: async () => (await load()).lsfFactory,
  kubernetes: async () => (await load()).kubernetesFactory,
  kubernetes_mcad: async () => (await load()).kubernetesMcadFactory,
};
