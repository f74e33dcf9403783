/**
 * The `kubernetes_mcad` scheduler: TorchX's MCAD scheduler's run options and AppWrapper. Dry runs always;
 * with a Kubernetes API client it creates, describes, lists and deletes the AppWrapper and reads its pods'
 * logs as TorchX does. See docs/schedulers/kubernetes-mcad.md.
 *
 * @module
 */
import {
  type AppState,
  type DescribeAppResponse,
  makeDescribeAppResponse,
  makeRole,
  type RoleStatus,
} from '../../specs/index.js';
import type { KubeResourceRef } from '../kubernetes/client.js';
import { KubeScheduler, type KubeSchedulerOptions } from '../kubernetes/kube-scheduler.js';
import { type K8sObject, LABELS } from '../kubernetes/pod.js';
import { stateFrom } from '../kubernetes/state.js';
import type { SchedulerContext } from '../scheduler.js';
import { type KubernetesMcadOpts, kubernetesMcadRunOpts } from './options.js';
import { APPWRAPPER_STATE, APPWRAPPER_TASK_STATE } from './state.js';
import {
  type KubernetesMcadRequest,
  type McadUniqueNamer,
  mcadCleanupStr,
  translateKubernetesMcadApp,
} from './translate.js';

/** Construction options of the `kubernetes_mcad` scheduler. */
export type KubernetesMcadSchedulerOptions = KubeSchedulerOptions<McadUniqueNamer>;

/** MCAD AppWrappers. */
export const APPWRAPPERS: KubeResourceRef = {
  group: 'workload.codeflare.dev',
  version: 'v1beta1',
  plural: 'appwrappers',
};

/** The task counters of an AppWrapper status TorchX reads, in its order. */
const TASK_COUNTERS = ['running', 'pending', 'failed', 'Succeeded'] as const;

interface GenericItem {
  generictemplate?: {
    metadata?: { labels?: Record<string, string> };
    spec?: { containers?: { image?: string }[] };
  };
}

/**
 * Describes an AppWrapper as TorchX does: the state from `status.state`; roles from the pods' role labels;
 * replica states handed out from MCAD's task counters (running, pending, failed, Succeeded; all
 * `Pending dispatch` when there are none), which MCAD does not tie to replicas. UNKNOWN without a status.
 */
export function describeAppWrapper(appId: string, wrapper: K8sObject): DescribeAppResponse {
  const status = wrapper.status as (Record<string, unknown> & { state?: string }) | undefined;
  if (!status) return makeDescribeAppResponse({ appId, state: 'UNKNOWN' });
  const items = ((wrapper.spec as { resources?: { GenericItems?: GenericItem[] } } | undefined)?.resources
    ?.GenericItems ?? []) as GenericItem[];
  const taskStates: AppState[] = [];
  for (const counter of TASK_COUNTERS) {
    const n = Number(status[counter] ?? 0);
    for (let i = 0; i < n; i++) taskStates.push(stateFrom(APPWRAPPER_TASK_STATE, counter));
  }
  if (taskStates.length === 0) {
    for (let i = 0; i < items.length - 1; i++)
      taskStates.push(stateFrom(APPWRAPPER_TASK_STATE, 'Pending dispatch'));
  }
  const counts = new Map<string, { count: number; image: string }>();
  for (const item of items) {
    const role = item.generictemplate?.metadata?.labels?.[LABELS.roleName];
    if (role === undefined) continue;
    const entry = counts.get(role) ?? {
      count: 0,
      image: item.generictemplate?.spec?.containers?.[0]?.image ?? '',
    };
    entry.count += 1;
    counts.set(role, entry);
  }
  let task = 0;
  const rolesStatuses: RoleStatus[] = [...counts.entries()].map(([role, { count }]) => ({
    role,
    replicas: Array.from({ length: count }, (_, id) => ({
      id,
      role,
      state: taskStates[task++] ?? 'UNKNOWN',
      hostname: '',
      structuredErrorMsg: '<NONE>',
    })),
  }));
  return makeDescribeAppResponse({
    appId,
    state: stateFrom(APPWRAPPER_STATE, status.state),
    rolesStatuses,
    roles: [...counts.entries()].map(([name, { count, image }]) =>
      makeRole({ name, image, numReplicas: count }),
    ),
  });
}

/**
 * The `kubernetes_mcad` scheduler (dry runs only).
 *
 * @example
 * ```ts
 * new KubernetesMcadScheduler({ sessionName: 'torchx' }).submitDryrun(app, {}).request.resource;
 * ```
 */
export class KubernetesMcadScheduler extends KubeScheduler<KubernetesMcadOpts, KubernetesMcadRequest> {
  constructor(context: SchedulerContext, options: KubernetesMcadSchedulerOptions = {}) {
    super(
      'kubernetes_mcad',
      context,
      {
        ref: APPWRAPPERS,
        name: 'AppWrapper',
        runOpts: kubernetesMcadRunOpts,
        translate: (app, cfg, workspace) =>
          translateKubernetesMcadApp(app, cfg, options.uniqueNamer, workspace),
      },
      options,
    );
  }

  protected describeObject(appId: string, object: K8sObject): DescribeAppResponse {
    return describeAppWrapper(appId, object);
  }

  protected podTemplates(object: K8sObject): K8sObject[] {
    const items = ((
      object.spec as { resources?: { GenericItems?: { generictemplate?: K8sObject }[] } } | undefined
    )?.resources?.GenericItems ?? []) as { generictemplate?: K8sObject }[];
    return items.flatMap((i) => (i.generictemplate?.kind === 'Pod' ? [i.generictemplate] : []));
  }

  /** TorchX's `get_appwrapper_status`: an AppWrapper without status is Pending. */
  protected stateOfObject(object: K8sObject): AppState {
    return stateFrom(APPWRAPPER_STATE, (object.status as { state?: string } | undefined)?.state ?? 'Pending');
  }

  /** TorchX reads replica k's log from pod `<app id>-<k>`, whatever the role (see translate.ts). */
  protected podName(name: string, _role: string, replica: number): string {
    return mcadCleanupStr(`${name}-${replica}`);
  }
}
