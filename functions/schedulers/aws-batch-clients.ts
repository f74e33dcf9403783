/** The aws_batch scheduler with one Batch client and the process's Logs client, created when a log is first read. */
import { BatchClient } from '@aws-sdk/client-batch';
import {
  type AwsBatchTranslatorOptions,
  createAwsBatchScheduler,
} from '../../lib/schedulers/aws-batch/index.js';
import type { SchedulerFactory } from '../../lib/schedulers/registry.js';
import type { SchedulerDeps } from './scheduler-module.js';

/** The submitting aws_batch factory: `translation` as the Planner's, and the clients. */
export function withClients(deps: SchedulerDeps, translation: AwsBatchTranslatorOptions): SchedulerFactory {
  return (ctx) =>
    createAwsBatchScheduler(ctx, {
      ...translation,
      batchClient: deps.created(new BatchClient({})),
      logsClient: deps.logsClient,
      queues: [...deps.config.batchQueues],
    });
}
