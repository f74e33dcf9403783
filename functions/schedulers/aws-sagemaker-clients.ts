/** The aws_sagemaker scheduler with one SageMaker client and the process's Logs client, created on first use. */
import { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import { SageMakerClient } from '@aws-sdk/client-sagemaker';
import {
  type AwsSageMakerTranslatorOptions,
  createAwsSageMakerScheduler,
} from '../../lib/schedulers/aws-sagemaker/index.js';
import type { SchedulerFactory } from '../../lib/schedulers/registry.js';
import type { SchedulerDeps } from './table.js';

/** The submitting aws_sagemaker factory: `translation` as the Planner's, and the clients. */
export function withClients(
  deps: SchedulerDeps,
  translation: AwsSageMakerTranslatorOptions,
): SchedulerFactory {
  return (ctx) =>
    createAwsSageMakerScheduler(ctx, {
      ...translation,
      sageMakerClient: deps.created(new SageMakerClient({})),
      logsClient: deps.logsClient(() => new CloudWatchLogsClient({})),
    });
}
