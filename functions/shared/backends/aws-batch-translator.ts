/**
 * aws_batch for the dry-run and scheduler-listing functions: the translation only, so their bundles carry no
 * Batch or CloudWatch Logs client.
 */
import { AwsBatchTranslator } from '../../../lib/schedulers/aws-batch/translator.js';
import type { SchedulerFactory } from '../../../lib/schedulers/registry.js';
import type { BackendDeps } from './deps.js';

/** The aws_batch translator factory (the deployment's stack tag and name prefix, as the scheduler adds them). */
export function awsBatchTranslatorFactory(deps: BackendDeps): SchedulerFactory {
  return (ctx) =>
    new AwsBatchTranslator(ctx, {
      stackTags: deps.deployment.stackTags,
      namePrefix: deps.deployment.batchNamePrefix,
    });
}
