/**
 * How the container loads each scheduler: a dynamic `import()` per backend module, so that the function
 * bundles (built with esbuild code splitting) load only the scheduler a request names, and only its SDK
 * clients. Each scheduler has two forms:
 * - `scheduler`: the full scheduler (submit, describe, cancel, logs) with its SDK clients;
 * - `translator`: what dry runs and `GET /v1/schedulers` need (run options, capabilities, translation); for
 *   aws_batch and aws_sagemaker a module with no SDK client, for the others the scheduler itself (their
 *   backends are configured, not called, until a request needs them).
 */
import type { SchedulerFactory } from '../../../lib/schedulers/registry.js';
import type { KnownScheduler } from '../config.js';
import type { BackendDeps } from './deps.js';

/** A scheduler factory built from the container's dependencies. */
export type BackendFactory = (deps: BackendDeps) => SchedulerFactory;

/** The two loaders of one scheduler. */
export interface BackendLoaders {
  scheduler(): Promise<BackendFactory>;
  translator(): Promise<BackendFactory>;
}

const slurm = async (): Promise<BackendFactory> => {
  const { slurmFactory } = await import('./slurm.js');
  return () => slurmFactory();
};
const localCwd = async (): Promise<BackendFactory> => (await import('./local-cwd.js')).localCwdFactory;
const lsf = async (): Promise<BackendFactory> => (await import('./dry-run-only.js')).lsfFactory;
const localDocker = async (): Promise<BackendFactory> =>
  (await import('./dry-run-only.js')).localDockerFactory;
const kubernetes = async (): Promise<BackendFactory> => (await import('./dry-run-only.js')).kubernetesFactory;
const kubernetesMcad = async (): Promise<BackendFactory> =>
  (await import('./dry-run-only.js')).kubernetesMcadFactory;

/** Every known scheduler's loaders (typed by the config's list, so none can be missing). */
export const BACKENDS: Readonly<Record<KnownScheduler, BackendLoaders>> = {
  aws_batch: {
    scheduler: async () => (await import('./aws-batch.js')).awsBatchFactory,
    translator: async () => (await import('./aws-batch-translator.js')).awsBatchTranslatorFactory,
  },
  aws_sagemaker: {
    scheduler: async () => (await import('./aws-sagemaker.js')).awsSageMakerFactory,
    translator: async () => (await import('./aws-sagemaker-translator.js')).awsSageMakerTranslatorFactory,
  },
  local_cwd: { scheduler: localCwd, translator: localCwd },
  slurm: { scheduler: slurm, translator: slurm },
  local_docker: { scheduler: localDocker, translator: localDocker },
  lsf: { scheduler: lsf, translator: lsf },
  kubernetes: { scheduler: kubernetes, translator: kubernetes },
  kubernetes_mcad: { scheduler: kubernetesMcad, translator: kubernetesMcad },
};
