/**
 * aws_sagemaker: the translation alone for the Planner; for the Runner, the scheduler with its clients
 * (aws-sagemaker-clients.ts, imported only then, so a dry run loads no SDK client).
 */
import { AwsSageMakerTranslator } from '../../lib/schedulers/aws-sagemaker/translator.js';
import type { SchedulerFactory } from '../../lib/schedulers/registry.js';
import type { SchedulerDeps } from './scheduler-module.js';

/** The aws_sagemaker factory (the stack tag and the allowed instance types in every translation). */
export async function create(deps: SchedulerDeps): Promise<SchedulerFactory> {
  const { stackTags, sageMakerInstanceTypes } = deps.deployment;
  const translation = {
    stackTags,
    ...(sageMakerInstanceTypes === undefined ? {} : { allowedInstanceTypes: sageMakerInstanceTypes }),
  };
  if (!deps.submits) return (ctx) => new AwsSageMakerTranslator(ctx, translation);
  const { withClients } = await import('./aws-sagemaker-clients.js');
  return withClients(deps, translation);
}
