/**
 * The backends that build no AWS SDK client until a request needs one (local_cwd, slurm, local_docker, lsf,
 * kubernetes, kubernetes_mcad) as one module: `sdk-free.ts` loads it with one dynamic `import()`, so a
 * function bundle has one chunk for all of them (each entry of a code-split build multiplies the shared
 * chunks a cold start has to load).
 */
export {
  kubernetesFactory,
  kubernetesMcadFactory,
  localDockerFactory,
  lsfFactory,
} from './dry-run-only.js';
export { localCwdFactory } from './local-cwd.js';
export { slurmFactory } from './slurm.js';
