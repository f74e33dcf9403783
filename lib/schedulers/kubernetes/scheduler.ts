/**
 * The `kubernetes` scheduler: TorchX's Kubernetes (Volcano) scheduler's run options and Volcano Job. Dry
 * runs always; with a Kubernetes API client (kubeconfig or EKS) it creates, describes, lists, deletes the
 * Job and reads its pods' logs as TorchX does. See docs/schedulers/kubernetes.md.
 *
 * @module
 */
import {
  type AppDef,
  type Cfg,
  type DescribeAppResponse,
  makeDescribeAppResponse,
  makeRole,
  type RoleStatus,
  ValidationError,
} from '../../specs/index.js';
import type { SchedulerContext } from '../scheduler.js';
import type { KubeResourceRef } from './client.js';
import { KubeScheduler, type KubeSchedulerOptions } from './kube-scheduler.js';
import { type KubernetesOpts, kubernetesRunOpts } from './options.js';
import { type K8sObject, normalizeStr } from './pod.js';
import { stateFrom, VOLCANO_JOB_STATE, VOLCANO_TASK_STATE } from './state.js';
import {
  type K8sUniqueNamer,
  type KubernetesRequest,
  RETRY_POLICIES,
  translateKubernetesApp,
} from './translate.js';

/** Construction options of the `kubernetes` scheduler. */
export type KubernetesSchedulerOptions = KubeSchedulerOptions<K8sUniqueNamer>;

/** Volcano Jobs. */
export const VOLCANO_JOBS: KubeResourceRef = {
  group: 'batch.volcano.sh',
  version: 'v1alpha1',
  plural: 'jobs',
};

/** Volcano's job status, as far as describe reads it. */
interface VolcanoStatus {
  state?: { phase?: string };
  taskStatusCount?: Record<string, { phase?: Record<string, number> }>;
  retryCount?: number;
}

/**
 * Describes a Volcano Job as TorchX does: the job phase through {@link VOLCANO_JOB_STATE}, and one replica
 * per task in `status.taskStatusCount` (task `<role>-<replica>`, state from its first phase); UNKNOWN
 * without a status.
 */
export function describeVolcanoJob(appId: string, job: K8sObject): DescribeAppResponse {
  const status = job.status as VolcanoStatus | undefined;
  if (!status) return makeDescribeAppResponse({ appId, state: 'UNKNOWN' });
  const statuses = new Map<string, RoleStatus>();
  for (const [task, count] of Object.entries(status.taskStatusCount ?? {})) {
    const cut = task.lastIndexOf('-');
    const role = cut < 0 ? '' : task.slice(0, cut);
    const id = Number.parseInt(task.slice(cut + 1), 10);
    const phase = Object.keys(count.phase ?? {})[0];
    const roleStatus = statuses.get(role) ?? { role, replicas: [] };
    roleStatus.replicas.push({
      id: Number.isNaN(id) ? 0 : id,
      role,
      state: stateFrom(VOLCANO_TASK_STATE, phase),
      hostname: '',
      structuredErrorMsg: '<NONE>',
    });
    statuses.set(role, roleStatus);
  }
  return makeDescribeAppResponse({
    appId,
    state: stateFrom(VOLCANO_JOB_STATE, status.state?.phase),
    numRestarts: status.retryCount ?? 0,
    rolesStatuses: [...statuses.values()],
    roles: [...statuses.values()].map((r) =>
      makeRole({ name: r.role, image: '', numReplicas: r.replicas.length }),
    ),
  });
}

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
export class KubernetesScheduler extends KubeScheduler<KubernetesOpts, KubernetesRequest> {
  constructor(context: SchedulerContext, options: KubernetesSchedulerOptions = {}) {
    super(
      'kubernetes',
      context,
      {
        ref: VOLCANO_JOBS,
        name: 'Volcano Job',
        runOpts: kubernetesRunOpts,
        translate: (app, cfg, workspace) => translateKubernetesApp(app, cfg, options.uniqueNamer, workspace),
      },
      options,
    );
  }

  protected describeObject(appId: string, object: K8sObject): DescribeAppResponse {
    return describeVolcanoJob(appId, object);
  }

  /** Volcano labels every pod of a job with `volcano.sh/job-name`. */
  protected override podSelector(name: string): string {
    return `volcano.sh/job-name=${name}`;
  }

  protected podTemplates(object: K8sObject): K8sObject[] {
    const tasks = ((object.spec as { tasks?: { template?: K8sObject }[] } | undefined)?.tasks ?? []) as {
      template?: K8sObject;
    }[];
    return tasks.flatMap((t) => (t.template ? [t.template] : []));
  }

  protected stateOfObject(object: K8sObject): DescribeAppResponse['state'] {
    return stateFrom(VOLCANO_JOB_STATE, (object.status as VolcanoStatus | undefined)?.state?.phase);
  }

  /** Volcano names a task's pod `<job>-<task>-<index>`; TorchX's tasks are `<role>-<replica>` with one pod. */
  protected podName(name: string, role: string, replica: number): string {
    return normalizeStr(`${name}-${role}-${replica}-0`);
  }

  override validate(app: AppDef, cfg: Readonly<Cfg> = {}): void {
    super.validate(app, cfg);
    checkRetryPolicies(app, this.backend);
  }
}
