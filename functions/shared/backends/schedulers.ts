/**
 * Where the Runner finds each scheduler. aws_batch and aws_sagemaker, the deployed stack's schedulers, are
 * imported statically: loading each as its own chunk (by dynamic `import()`, with esbuild code splitting) was
 * measured to cost a scheduler route's cold start more than the ~80 KB it kept out (docs/performance.md: a
 * second SDK client costs ~2 ms, each extra chunk file ~0.5–1 ms, and a split Run loaded 26 files). The
 * SDK-free backends load together when a request first names one (`sdk-free.ts`).
 */
import type { KnownScheduler } from '../config.js';
import { awsBatchFactory } from './aws-batch.js';
import { awsSageMakerFactory } from './aws-sagemaker.js';
import type { BackendFactory } from './deps.js';
import { SDK_FREE_MODULES } from './sdk-free.js';

/** Every known scheduler's full backend (typed by the config's list, so none can be missing). */
export const SCHEDULER_MODULES: Readonly<Record<KnownScheduler, () => Promise<BackendFactory>>> = {
  aws_batch: async () => awsBatchFactory,
  aws_sagemaker: async () => awsSageMakerFactory,
  ...SDK_FREE_MODULES,
};
