/** The aws_sagemaker backend: its clients are created when a request first uses the scheduler. */
import { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import { SageMakerClient } from '@aws-sdk/client-sagemaker';
import { createAwsSageMakerScheduler } from '../../../lib/schedulers/aws-sagemaker/index.js';
import type { SchedulerFactory } from '../../../lib/schedulers/registry.js';
import type { BackendDeps } from './deps.js';

/** The aws_sagemaker factory: one SageMaker client and the shared Logs client, created on first use. */
export function awsSageMakerFactory(deps: BackendDeps): SchedulerFactory {
  return (ctx) =>
    createAwsSageMakerScheduler(ctx, {
      sageMakerClient: deps.created(new SageMakerClient({})),
      logsClient: deps.logsClient(() => new CloudWatchLogsClient({})),
      stackTags: deps.deployment.stackTags,
      ...(deps.deployment.sageMakerInstanceTypes === undefined
        ? {}
        : { allowedInstanceTypes: deps.deployment.sageMakerInstanceTypes }),
    });
}
