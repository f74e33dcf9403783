/**
 * Where the Runner finds each scheduler: one dynamic `import()` per AWS backend, so that a function bundle
 * (esbuild code splitting) loads only the scheduler a request names, with its SDK clients (a Batch run does
 * not load the SageMaker client: ~55 KB less at its first call, and no slower: docs/performance.md). The
 * SDK-free backends load together when a request first names one (`sdk-free.ts`).
 */
import type { KnownScheduler } from '../config.js';
import type { BackendFactory } from './deps.js';
import { SDK_FREE_MODULES } from './sdk-free.js';

/** Every known scheduler's full backend (typed by the config's list, so none can be missing). */
export const SCHEDULER_MODULES: Readonly<Record<KnownScheduler, () => Promise<BackendFactory>>> = {
  aws_batch: async () => (await import('./aws-batch.js')).awsBatchFactory,
  aws_sagemaker: async () => (await import('./aws-sagemaker.js')).awsSageMakerFactory,
  ...SDK_FREE_MODULES,
};
