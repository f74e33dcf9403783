/** The aws_batch backend: its clients are created when a request first uses the scheduler. */
import { BatchClient } from '@aws-sdk/client-batch';
import { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import { createAwsBatchScheduler } from '../../../lib/schedulers/aws-batch/index.js';
import type { SchedulerFactory } from '../../../lib/schedulers/registry.js';
import type { BackendDeps } from './deps.js';

/** The aws_batch factory: one Batch client and the shared Logs client, created on first use. */
export function awsBatchFactory(deps: BackendDeps): SchedulerFactory {
  return (ctx) =>
    createAwsBatchScheduler(ctx, {
      batchClient: deps.created(new BatchClient({})),
      logsClient: deps.logsClient(() => new CloudWatchLogsClient({})),
      queues: [...deps.config.batchQueues],
      stackTags: deps.deployment.stackTags,
      namePrefix: deps.deployment.batchNamePrefix,
    });
}
