/**
 * aws_batch: the translation alone for the Planner; for the Runner, the scheduler with its clients
 * (aws-batch-clients.ts, imported only then, so a dry run loads no SDK).
 */
import { AwsBatchTranslator } from '../../lib/schedulers/aws-batch/translator.js';
import type { SchedulerFactory } from '../../lib/schedulers/registry.js';
import type { SchedulerDeps } from './scheduler-module.js';

/**
 * The aws_batch factory (the deployment's stack tag, name prefix and workspace fetch image in every
 * translation).
 */
export async function create(deps: SchedulerDeps): Promise<SchedulerFactory> {
  const { stackTags, batchNamePrefix, workspaceFetchImage } = deps.deployment;
  const translation = {
    stackTags,
    namePrefix: batchNamePrefix,
    ...(workspaceFetchImage === undefined ? {} : { workspaceFetchImage }),
  };
  if (!deps.submits) return (ctx) => new AwsBatchTranslator(ctx, translation);
  const { withClients } = await import('./aws-batch-clients.js');
  return withClients(deps, translation);
}
