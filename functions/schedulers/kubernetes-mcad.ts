/** kubernetes_mcad: TorchX's AppWrapper; the API calls when a cluster is configured (as kubernetes). */
import { KubernetesMcadScheduler } from '../../lib/schedulers/kubernetes-mcad/index.js';
import type { SchedulerFactory } from '../../lib/schedulers/registry.js';
import { kubeOptions } from './kubernetes.js';
import type { SchedulerDeps } from './scheduler-module.js';

/** The kubernetes_mcad factory. */
export function create(deps: SchedulerDeps): SchedulerFactory {
  return (ctx) => new KubernetesMcadScheduler(ctx, kubeOptions(deps));
}
