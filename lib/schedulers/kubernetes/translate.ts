/**
 * Pure translation of an AppDef into the Volcano `Job` TorchX's `kubernetes` scheduler creates
 * (`app_to_resource`): one task per replica (macros differ per replica), each a pod with the role's container,
 * resources, mounts, ports and TorchX's labels; retry policies per task and the job's `maxRetry`.
 *
 * @module
 */
import { type AppDef, applyMacros, makeUnique, type Role } from '../../specs/index.js';
import { type ImagesToPush, withPushedImages } from '../images.js';
import type { KubernetesOpts } from './options.js';
import {
  ANNOTATION_ISTIO_SIDECAR,
  K8S_TORCHX_VERSION,
  type K8sObject,
  LABELS,
  nodeSelectorOf,
  normalizeStr,
  portsOf,
  resourcesOf,
  storageOf,
} from './pod.js';
import { type KubeWorkspace, podRun } from './workspace.js';

/** The native request of `kubernetes`: the Volcano Job to create, in its namespace. */
export interface KubernetesRequest {
  namespace: string;
  /** The `batch.volcano.sh/v1alpha1` Job, as the Kubernetes API takes it. */
  resource: K8sObject;
  /** Local images and the repository and tag TorchX would push them to. */
  imagesToPush: ImagesToPush;
}

/** Makes the app's unique name from its name (TorchX `make_unique`); injectable so tests are deterministic. */
export type K8sUniqueNamer = (name: string) => string;

/** The env var holding rank 0's host in the first replica (set to `localhost` there). */
export const K8S_RANK0_ENV = 'TORCHX_RANK0_HOST';
/** Env values starting with this become `valueFrom.fieldRef` (TorchX's `PLACEHOLDER_FIELD_PATH`). */
export const PLACEHOLDER_FIELD_PATH = '[FIELD_PATH]';

/** Volcano task policies per retry policy (TorchX `RETRY_POLICIES`); ROLE has none (TorchX: KeyError). */
export const RETRY_POLICIES: Readonly<Record<string, readonly K8sObject[]>> = Object.freeze({
  REPLICA: [],
  APPLICATION: [
    { event: 'PodEvicted', action: 'RestartJob' },
    { event: 'PodFailed', action: 'RestartJob' },
  ],
});

/**
 * The container env. A value `[FIELD_PATH]<path>` becomes `valueFrom.fieldRef.fieldPath: <path>`. Deliberate
 * difference: TorchX cut the marker with `str.strip`, which also ate trailing capitals of the path
 * (`status.podIP` became `status.pod`); here only the prefix is removed.
 */
function envOf(role: Role): K8sObject[] {
  return Object.entries(role.env).map(([name, value]) =>
    value.startsWith(PLACEHOLDER_FIELD_PATH)
      ? { name, valueFrom: { fieldRef: { fieldPath: value.slice(PLACEHOLDER_FIELD_PATH.length) } } }
      : { name, value },
  );
}

/**
 * The pod of one replica (TorchX `kubernetes_scheduler.role_to_pod`); with a workspace, the pod also copies
 * the archive in an init container and the role's command starts in it ({@link podRun}).
 */
export function volcanoPod(
  name: string,
  role: Role,
  serviceAccount: string | null,
  workspace?: KubeWorkspace,
): K8sObject {
  const { securityContext, ...storage } = storageOf(role);
  const resources = resourcesOf(role);
  const run = podRun(role, resources, storage, workspace);
  const container: K8sObject = {
    command: run.command,
    image: role.image,
    name,
    env: envOf(role),
    resources,
    ports: portsOf(role),
    volumeMounts: run.volumeMounts,
    securityContext,
  };
  const spec: K8sObject = {
    ...(run.initContainers ? { initContainers: run.initContainers } : {}),
    containers: [container],
    restartPolicy: 'Never',
    volumes: run.volumes,
    nodeSelector: nodeSelectorOf(role),
  };
  if (serviceAccount !== null) spec.serviceAccountName = serviceAccount;
  return { spec, metadata: { annotations: { [ANNOTATION_ISTIO_SIDECAR]: 'false' }, labels: {} } };
}

/** TorchX's pod labels (`kubernetes_scheduler.pod_labels`). */
export function volcanoPodLabels(app: AppDef, roleIdx: number, role: Role, replicaId: number, appId: string) {
  return {
    [LABELS.version]: K8S_TORCHX_VERSION,
    [LABELS.appName]: app.name,
    [LABELS.roleIndex]: String(roleIdx),
    [LABELS.roleName]: role.name,
    [LABELS.replicaId]: String(replicaId),
    [LABELS.kubeAppName]: app.name,
    [LABELS.organization]: 'torchx.pytorch.org',
    [LABELS.uniqueName]: appId,
  };
}

/**
 * The Volcano Job for `app` (TorchX `app_to_resource`); every pod starts in `workspace` when one is given.
 *
 * @example
 * ```ts
 * volcanoJob(app, 'default', null, null).spec; // { schedulerName: 'volcano', queue: 'default', tasks: [...], ... }
 * ```
 */
export function volcanoJob(
  app: AppDef,
  queue: string,
  serviceAccount: string | null,
  priorityClass: string | null,
  uniqueNamer: K8sUniqueNamer = (name) => makeUnique(name),
  workspace?: KubeWorkspace,
): K8sObject {
  const uniqueAppId = normalizeStr(uniqueNamer(app.name));
  const firstRole = app.roles[0]?.name ?? '';
  const tasks: K8sObject[] = [];
  app.roles.forEach((role, roleIdx) => {
    for (let replicaId = 0; replicaId < role.numReplicas; replicaId++) {
      const isRank0 = roleIdx === 0 && replicaId === 0;
      const replicaRole = applyMacros(role, {
        imgRoot: '',
        appId: uniqueAppId,
        replicaId: String(replicaId),
        rank0Env: isRank0 ? K8S_RANK0_ENV : `VC_${normalizeStr(firstRole)}_0_HOSTS`.toUpperCase(),
      });
      if (isRank0) replicaRole.env[K8S_RANK0_ENV] = 'localhost';
      const name = normalizeStr(`${role.name}-${replicaId}`);
      const pod = volcanoPod(name, replicaRole, serviceAccount, workspace);
      (pod.metadata as { labels: Record<string, string> }).labels = volcanoPodLabels(
        app,
        roleIdx,
        role,
        replicaId,
        uniqueAppId,
      );
      const task: K8sObject = { replicas: 1, name, template: pod };
      if (role.maxRetries > 0) {
        task.maxRetry = role.maxRetries;
        task.policies = RETRY_POLICIES[role.retryPolicy] ?? [];
      }
      if (role.minReplicas !== undefined) task.minAvailable = replicaId < role.minReplicas ? 1 : 0;
      tasks.push(task);
    }
  });
  const jobSpec: K8sObject = {
    schedulerName: 'volcano',
    queue,
    tasks,
    maxRetry: Math.min(...app.roles.map((r) => r.maxRetries)),
    plugins: { svc: ['--publish-not-ready-addresses'], env: [] },
  };
  if (priorityClass !== null) jobSpec.priorityClassName = priorityClass;
  return {
    apiVersion: 'batch.volcano.sh/v1alpha1',
    kind: 'Job',
    metadata: { name: uniqueAppId },
    spec: jobSpec,
  };
}

/**
 * Translates an app into the `kubernetes` request (TorchX `KubernetesScheduler._submit_dryrun`), every pod
 * starting in `workspace` when one is given. Pure.
 */
export function translateKubernetesApp(
  app: AppDef,
  cfg: KubernetesOpts,
  uniqueNamer?: K8sUniqueNamer,
  workspace?: KubeWorkspace,
): { app: AppDef; request: KubernetesRequest } {
  const pushed = withPushedImages(app, cfg.image_repo);
  const resource = volcanoJob(
    pushed.app,
    cfg.queue,
    cfg.service_account,
    cfg.priority_class,
    uniqueNamer,
    workspace,
  );
  return {
    app: pushed.app,
    request: { namespace: cfg.namespace, resource, imagesToPush: pushed.imagesToPush },
  };
}
