/**
 * Where the Planner finds each scheduler's translation (run options, capabilities, dry runs). aws_batch and
 * aws_sagemaker, the deployed stack's schedulers, are SDK-free modules imported statically (~50 KB of plain
 * code: as chunks they cost the first dry run a dozen more files, 6–11 ms of CPU here); the others are
 * their backend modules, loaded when a request names them. Kept apart from `schedulers.ts` so that the dry-run
 * and scheduler-listing bundles see none of the full backends' modules.
 */
import type { KnownScheduler } from '../config.js';
import { awsBatchTranslatorFactory } from './aws-batch-translator.js';
import { awsSageMakerTranslatorFactory } from './aws-sagemaker-translator.js';
import type { BackendFactory } from './deps.js';
import { SDK_FREE_MODULES } from './sdk-free.js';

/** Every known scheduler's translation-only backend (typed by the config's list, so none can be missing). */
export const TRANSLATOR_MODULES: Readonly<Record<KnownScheduler, () => Promise<BackendFactory>>> = {
  aws_batch: async () => awsBatchTranslatorFactory,
  aws_sagemaker: async () => awsSageMakerTranslatorFactory,
  ...SDK_FREE_MODULES,
};
