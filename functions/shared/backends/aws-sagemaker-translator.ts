/**
 * aws_sagemaker for the dry-run and scheduler-listing functions: the translation only, so their bundles carry
 * no SageMaker or CloudWatch Logs client.
 */
import { AwsSageMakerTranslator } from '../../../lib/schedulers/aws-sagemaker/translator.js';
import type { SchedulerFactory } from '../../../lib/schedulers/registry.js';
import type { BackendDeps } from './deps.js';

/** The aws_sagemaker translator factory: the stack tag and the allowed instance types, as the scheduler has. */
export function awsSageMakerTranslatorFactory(deps: BackendDeps): SchedulerFactory {
  return (ctx) =>
    new AwsSageMakerTranslator(ctx, {
      stackTags: deps.deployment.stackTags,
      ...(deps.deployment.sageMakerInstanceTypes === undefined
        ? {}
        : { allowedInstanceTypes: deps.deployment.sageMakerInstanceTypes }),
    });
}
