/**
 * Run options of the `kubernetes_mcad` scheduler: exactly TorchX's (`KubernetesMCADScheduler.run_opts`, which
 * replaces the Docker workspace options, so there is no `quiet`): names, types, defaults and help text.
 *
 * @module
 */
import { type Cfg, RunOpts } from '../../specs/index.js';
import { NAMESPACE_HELP, SERVICE_ACCOUNT_HELP } from '../kubernetes/options.js';

/** The resolved run options of `kubernetes_mcad`. */
export interface KubernetesMcadOpts extends Cfg {
  namespace: string;
  image_repo: string | null;
  service_account: string | null;
  priority: number | null;
  priority_class_name: string | null;
  image_secret: string | null;
  coscheduler_name: string | null;
  network: string | null;
}

/**
 * Declares the options of `kubernetes_mcad`, in TorchX's order.
 *
 * @example
 * ```ts
 * kubernetesMcadRunOpts().resolve({}).namespace; // 'default'
 * ```
 */
export function kubernetesMcadRunOpts(): RunOpts {
  return new RunOpts()
    .add('namespace', { type: 'str', default: 'default', help: NAMESPACE_HELP })
    .add('image_repo', {
      type: 'str',
      help: 'The image repository to use when pushing patched images, must have push access. Ex: example.com/your/container',
    })
    .add('service_account', { type: 'str', help: SERVICE_ACCOUNT_HELP })
    .add('priority', {
      type: 'int',
      help: 'The priority level to set on the job specs. Higher integer value means higher priority',
    })
    .add('priority_class_name', {
      type: 'str',
      help: 'Pod specific priority level. Check with your Kubernetes cluster admin if Priority classes are defined on your system',
    })
    .add('image_secret', {
      type: 'str',
      help: 'The name of the Kubernetes/OpenShift secret set up for private images',
    })
    .add('coscheduler_name', {
      type: 'str',
      help: 'Option to run TorchX-MCAD with a co-scheduler. User must provide the co-scheduler name.',
    })
    .add('network', {
      type: 'str',
      help: 'Name of additional pod-to-pod network beyond default Kubernetes network',
    });
}
