/**
 * The `kubernetes_mcad` scheduler: TorchX's MCAD scheduler's run options and AppWrapper, for dry runs.
 * Creating the AppWrapper over the Kubernetes API is not wired yet: see docs/schedulers/kubernetes_mcad.md.
 *
 * @module
 */
import { type AppDef, AppDryRunInfo, type RunOpts } from '../../specs/index.js';
import { DryRunOnlyScheduler } from '../dry-run-only.js';
import type { SchedulerContext } from '../scheduler.js';
import { type KubernetesMcadOpts, kubernetesMcadRunOpts } from './options.js';
import { type KubernetesMcadRequest, type McadUniqueNamer, translateKubernetesMcadApp } from './translate.js';

/** Construction options of {@link KubernetesMcadScheduler}. */
export interface KubernetesMcadSchedulerOptions {
  /** Makes the app's unique name; TorchX's `make_unique(name, length)` by default. */
  uniqueNamer?: McadUniqueNamer;
}

/** Why `kubernetes_mcad` submits nothing yet. */
export const KUBERNETES_MCAD_NOT_SUBMITTED =
  'the Kubernetes API client is not wired in this release; run `txs dryrun -s kubernetes_mcad ...` and apply ' +
  "the request's `resource` with `kubectl create -f` (it is TorchX's AppWrapper).";

/**
 * The `kubernetes_mcad` scheduler (dry runs only).
 *
 * @example
 * ```ts
 * new KubernetesMcadScheduler({ sessionName: 'torchx' }).submitDryrun(app, {}).request.resource;
 * ```
 */
export class KubernetesMcadScheduler extends DryRunOnlyScheduler<KubernetesMcadOpts, KubernetesMcadRequest> {
  private readonly uniqueNamer: McadUniqueNamer | undefined;

  constructor(context: SchedulerContext, options: KubernetesMcadSchedulerOptions = {}) {
    super('kubernetes_mcad', context, KUBERNETES_MCAD_NOT_SUBMITTED);
    this.uniqueNamer = options.uniqueNamer;
  }

  runOpts(): RunOpts {
    return kubernetesMcadRunOpts();
  }

  protected translate(app: AppDef, cfg: KubernetesMcadOpts): AppDryRunInfo<KubernetesMcadRequest> {
    const translated = translateKubernetesMcadApp(app, cfg, this.uniqueNamer);
    return new AppDryRunInfo(this.backend, translated.app, cfg, translated.request);
  }
}
