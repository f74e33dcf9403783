/**
 * Where the Runner finds each scheduler. aws_batch and aws_sagemaker, the deployed stack's schedulers, are
 * imported statically; each scheduler's SDK clients are still created only when a request first uses it.
 * Loading each AWS backend as its own chunk (dynamic `import()`) was measured in the same alternating run:
 * a Batch request then loads ~55 KB less but 17 files instead of 6, and its cold start costs 10–17 ms more
 * CPU (docs/performance.md). The SDK-free backends load together when a request first names one
 * (`sdk-free.ts`).
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
