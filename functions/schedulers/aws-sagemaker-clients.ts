/** The aws_sagemaker scheduler with one SageMaker client and the process's Logs client, created when a log is first read. */
import { SageMakerClient } from '@aws-sdk/client-sagemaker';
import { createAwsSageMakerScheduler } from '../../lib/schedulers/aws-sagemaker/scheduler.js';
import type { AwsSageMakerTranslatorOptions } from '../../lib/schedulers/aws-sagemaker/translator.js';
import type { SchedulerFactory } from '../../lib/schedulers/registry.js';
import type { SchedulerDeps } from './scheduler-module.js';

/** The submitting aws_sagemaker factory: `translation` as the Planner's, and the clients. */
export function withClients(
  deps: SchedulerDeps,
  translation: AwsSageMakerTranslatorOptions,
): SchedulerFactory {
  return (ctx) =>
    createAwsSageMakerScheduler(ctx, {
      ...translation,
      sageMakerClient: deps.created(new SageMakerClient({})),
      logsClient: deps.logsClient,
    });
}
