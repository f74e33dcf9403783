/** kubernetes_mcad: TorchX's AppWrapper; the API calls when a cluster is configured (as kubernetes). */
import { KubernetesMcadScheduler } from '../../lib/schedulers/kubernetes-mcad/index.js';
import type { SchedulerFactory } from '../../lib/schedulers/registry.js';
import { sharedKubeAccess } from './kubernetes.js';

/** The kubernetes_mcad factory. */
export function create(): SchedulerFactory {
  return (ctx) => {
    const kube = sharedKubeAccess();
    return new KubernetesMcadScheduler(ctx, kube ? { access: kube } : {});
  };
}
