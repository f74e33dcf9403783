/**
 * The `kubernetes` scheduler: TorchX's Kubernetes (Volcano) scheduler's run options and Volcano Job, for dry
 * runs. Creating the Job over the Kubernetes API is not wired yet: see docs/schedulers/kubernetes.md.
 *
 * @module
 */
import { type AppDef, AppDryRunInfo, type Cfg, type RunOpts, ValidationError } from '../../specs/index.js';
import { DryRunOnlyScheduler } from '../dry-run-only.js';
import type { SchedulerContext } from '../scheduler.js';
import { type KubernetesOpts, kubernetesRunOpts } from './options.js';
import {
  type K8sUniqueNamer,
  type KubernetesRequest,
  RETRY_POLICIES,
  translateKubernetesApp,
} from './translate.js';

/** Construction options of {@link KubernetesScheduler}. */
export interface KubernetesSchedulerOptions {
  /** Makes the app's unique name; TorchX's `make_unique` by default. */
  uniqueNamer?: K8sUniqueNamer;
}

/** Why `kubernetes` submits nothing yet. */
export const KUBERNETES_NOT_SUBMITTED =
  'the Kubernetes API client is not wired in this release; run `txs dryrun -s kubernetes ...` and apply the ' +
  "request's `resource` with `kubectl create -f` (it is TorchX's Volcano Job).";

/**
 * Rejects retries with the ROLE retry policy, which Volcano has no task policy for (TorchX failed with a
 * KeyError).
 */
export function checkRetryPolicies(app: AppDef, scheduler: string): void {
  app.roles.forEach((role, i) => {
    if (role.maxRetries > 0 && !Object.hasOwn(RETRY_POLICIES, role.retryPolicy)) {
      throw ValidationError.forField(
        `app.roles.${i}.retryPolicy`,
        `${scheduler} supports the retry policies ${Object.keys(RETRY_POLICIES).join(' and ')}; ` +
          `got ${role.retryPolicy}`,
      );
    }
  });
}

/**
 * The `kubernetes` scheduler (dry runs only).
 *
 * @example
 * ```ts
 * new KubernetesScheduler({ sessionName: 'torchx' }).submitDryrun(app, { queue: 'default' }).request.resource;
 * ```
 */
export class KubernetesScheduler extends DryRunOnlyScheduler<KubernetesOpts, KubernetesRequest> {
  private readonly uniqueNamer: K8sUniqueNamer | undefined;

  constructor(context: SchedulerContext, options: KubernetesSchedulerOptions = {}) {
    super('kubernetes', context, KUBERNETES_NOT_SUBMITTED);
    this.uniqueNamer = options.uniqueNamer;
  }

  runOpts(): RunOpts {
    return kubernetesRunOpts();
  }

  override validate(app: AppDef, cfg: Readonly<Cfg> = {}): void {
    super.validate(app, cfg);
    checkRetryPolicies(app, this.backend);
  }

  protected translate(app: AppDef, cfg: KubernetesOpts): AppDryRunInfo<KubernetesRequest> {
    const translated = translateKubernetesApp(app, cfg, this.uniqueNamer);
    return new AppDryRunInfo(this.backend, translated.app, cfg, translated.request);
  }
}
