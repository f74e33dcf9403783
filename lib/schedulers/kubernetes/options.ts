/**
 * Run options of the `kubernetes` scheduler: exactly TorchX's (`KubernetesScheduler._run_opts` followed by
 * the Docker workspace options `image_repo` and `quiet`): names, types, defaults and help text.
 *
 * @module
 */
import { type Cfg, RunOpts } from '../../specs/index.js';

/** The resolved run options of `kubernetes`. */
export interface KubernetesOpts extends Cfg {
  namespace: string;
  queue: string;
  service_account: string | null;
  priority_class: string | null;
  image_repo: string | null;
  quiet: boolean;
}

/** Help of TorchX's Docker workspace option `image_repo` (kubernetes). */
export const IMAGE_REPO_HELP =
  '(remote jobs) the image repository to use when pushing patched images, must have push access. Ex: example.com/your/container';
/** Help of TorchX's Docker workspace option `quiet`. */
export const QUIET_HELP = 'whether to suppress verbose output for image building. Defaults to ``False``.';
/** Help of TorchX's `namespace` option (kubernetes and kubernetes_mcad). */
export const NAMESPACE_HELP = 'Kubernetes namespace to schedule job in';
/** Help of TorchX's `service_account` option (kubernetes and kubernetes_mcad). */
export const SERVICE_ACCOUNT_HELP = 'The service account name to set on the pod specs';

/**
 * Declares the options of `kubernetes`, in TorchX's order.
 *
 * @example
 * ```ts
 * kubernetesRunOpts().resolve({ queue: 'default' }).namespace; // 'default'
 * ```
 */
export function kubernetesRunOpts(): RunOpts {
  return new RunOpts()
    .add('namespace', { type: 'str', default: 'default', help: NAMESPACE_HELP })
    .add('queue', { type: 'str', required: true, help: 'Volcano queue to schedule job in' })
    .add('service_account', { type: 'str', help: SERVICE_ACCOUNT_HELP })
    .add('priority_class', { type: 'str', help: 'The name of the PriorityClass to set on the job specs' })
    .add('image_repo', { type: 'str', help: IMAGE_REPO_HELP })
    .add('quiet', { type: 'bool', default: false, help: QUIET_HELP });
}
