/**
 * Pure translation of an AppDef into the MCAD `AppWrapper` TorchX's `kubernetes_mcad` scheduler creates
 * (`app_to_resource`): a PodGroup per role when a co-scheduler is named, a pod per replica, a headless
 * Service, and requeuing when every role retries.
 *
 * Faithful to TorchX, including its naming: pods are named `<app id>-<replica id>`, so two roles' replicas
 * with the same index get the same name (Kubernetes then refuses the second); use one role per AppWrapper
 * or distinct replica counts until TorchX changes this.
 *
 * @module
 */
import { type AppDef, applyMacros, makeUnique, type Role, randomIdOfLength } from '../../specs/index.js';
import { type ImagesToPush, withPushedImages } from '../images.js';
import {
  ANNOTATION_ISTIO_SIDECAR,
  K8S_TORCHX_VERSION,
  type K8sObject,
  LABELS,
  nodeSelectorOf,
  portsOf,
  resourcesOf,
  storageOf,
} from '../kubernetes/pod.js';
import { type KubeWorkspace, podRun } from '../kubernetes/workspace.js';
import type { KubernetesMcadOpts } from './options.js';

/** The native request of `kubernetes_mcad`: the AppWrapper to create, in its namespace. */
export interface KubernetesMcadRequest {
  namespace: string;
  /** The `workload.codeflare.dev/v1beta1` AppWrapper, as the Kubernetes API takes it. */
  resource: K8sObject;
  /** Local images and the repository and tag TorchX would push them to. */
  imagesToPush: ImagesToPush;
}

/** Makes `<name>-<id of length>` (TorchX `make_unique(name, length)`); injectable so tests are deterministic. */
export type McadUniqueNamer = (name: string, length: number) => string;

/** TorchX's namer: `<name>-<random id of length characters>`. */
export const defaultMcadUniqueNamer: McadUniqueNamer = (name, length) =>
  makeUnique(name, randomIdOfLength(length));

/** Longest name of the Kubernetes objects the AppWrapper holds. */
export const MAX_K8S_NAME = 63;
/** The port of the headless Service when no role declares one. */
export const DEFAULT_SERVICE_PORT = 29500;
const RANK0_ENV = 'TORCHX_RANK0_HOST';

/**
 * Lower-cases `data`, keeps only `[a-z0-9-]` (after dropping one leading `-`) and strips leading digits
 * (TorchX `kubernetes_mcad_scheduler.cleanup_str`).
 *
 * @example
 * ```ts
 * mcadCleanupStr('9Train.x'); // 'trainx'
 * ```
 */
export function mcadCleanupStr(data: string): string {
  const text = data.startsWith('-') ? data.slice(1) : data;
  return (text.toLowerCase().match(/[a-z0-9-]/g) ?? []).join('').replace(/^[0-9]+/, '');
}

/**
 * The unique app id and the (possibly truncated) app name (TorchX `get_unique_truncated_appid`): the random
 * part is 14 characters, fewer when the name is long, and the name is cut when fewer than 4 would remain.
 */
export function mcadUniqueAppId(app: AppDef, namer: McadUniqueNamer): { appId: string; appName: string } {
  const uidChars = 4;
  const pgChars = 3 + app.roles.length;
  const size = MAX_K8S_NAME - (app.name.length + uidChars + pgChars);
  let idSize = Math.min(size, 14);
  let appName = app.name;
  if (idSize <= 3) {
    appName = app.name.slice(0, MAX_K8S_NAME - uidChars - pgChars);
    idSize = 3;
  }
  return { appId: mcadCleanupStr(namer(appName, idSize)), appName };
}

function hostsEnvName(roleName: string): string {
  return `TORCHX_MCAD_${mcadCleanupStr(roleName)}_0_HOSTS`.toUpperCase().replaceAll('-', '');
}

function objectLabels(app: AppDef, appId: string): Record<string, string> {
  return {
    [LABELS.kubeAppName]: app.name,
    [LABELS.organization]: 'torchx.pytorch.org',
    [LABELS.uniqueName]: appId,
  };
}

function mcadPod(
  name: string,
  appId: string,
  role: Role,
  cfg: KubernetesMcadOpts,
  workspace: KubeWorkspace | undefined,
): K8sObject {
  const { securityContext, ...storage } = storageOf(role);
  const env = [
    ...Object.entries(role.env).map(([envName, value]) => ({ name: envName, value })),
    { name: hostsEnvName(role.name), value: `${appId}-0.${appId}` },
  ];
  const resources = resourcesOf(role);
  const run = podRun(role, resources, storage, workspace);
  const container = {
    command: run.command,
    image: role.image,
    name,
    env,
    resources,
    ports: portsOf(role),
    volumeMounts: run.volumeMounts,
    securityContext,
  };
  const annotations: Record<string, string> = { [ANNOTATION_ISTIO_SIDECAR]: 'false' };
  if (cfg.network !== null) annotations['k8s.v1.cni.cncf.io/networks'] = cfg.network;
  const spec: K8sObject = {
    ...(run.initContainers ? { initContainers: run.initContainers } : {}),
    containers: [container],
    hostname: name,
    subdomain: appId,
    imagePullSecrets: [cfg.image_secret === null ? {} : { name: cfg.image_secret }],
    restartPolicy: 'Never',
    volumes: run.volumes,
    nodeSelector: nodeSelectorOf(role),
  };
  if (cfg.service_account !== null) spec.serviceAccountName = cfg.service_account;
  if (cfg.coscheduler_name !== null) spec.schedulerName = cfg.coscheduler_name;
  if (cfg.priority_class_name !== null) spec.priorityClassName = cfg.priority_class_name;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    spec,
    metadata: { name, annotations, labels: {}, namespace: cfg.namespace },
  };
}

function podGroup(app: AppDef, role: Role, roleIdx: number, namespace: string, appId: string): K8sObject {
  return {
    replicas: 1,
    generictemplate: {
      apiVersion: 'scheduling.sigs.k8s.io/v1alpha1',
      kind: 'PodGroup',
      metadata: {
        name: `${appId}-pg${roleIdx}`,
        namespace,
        labels: { ...objectLabels(app, appId), 'appwrapper.workload.codeflare.dev': appId },
      },
      spec: { minMember: role.numReplicas },
    },
  };
}

/** The port of the headless Service: the last port any role declares, 29500 if none or out of range. */
export function servicePort(app: AppDef): number {
  let port = DEFAULT_SERVICE_PORT;
  for (const role of app.roles) for (const value of Object.values(role.portMap)) port = value;
  return port > 0 && port <= 65535 ? port : DEFAULT_SERVICE_PORT;
}

function headlessService(app: AppDef, name: string, namespace: string, port: number): K8sObject {
  return {
    replicas: 1,
    generictemplate: {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, namespace, labels: objectLabels(app, name) },
      spec: {
        clusterIP: 'None',
        publishNotReadyAddresses: true,
        ports: [{ protocol: 'TCP', port, targetPort: port }],
        selector: { [LABELS.uniqueName]: name },
        sessionAffinity: 'None',
        type: 'ClusterIP',
      },
      status: { loadBalancer: {} },
    },
  };
}

/**
 * The AppWrapper for `app` (TorchX `kubernetes_mcad_scheduler.app_to_resource`) and the app as named in it
 * (TorchX cuts names too long for Kubernetes objects); every pod starts in `workspace` when one is given.
 */
export function appWrapper(
  input: AppDef,
  cfg: KubernetesMcadOpts,
  namer: McadUniqueNamer = defaultMcadUniqueNamer,
  workspace?: KubeWorkspace,
): { app: AppDef; resource: K8sObject } {
  const { appId, appName } = mcadUniqueAppId(input, namer);
  const app: AppDef = { ...input, name: appName };
  const items: K8sObject[] = [];
  if (cfg.coscheduler_name !== null) {
    app.roles.forEach((role, roleIdx) => {
      items.push(podGroup(app, role, roleIdx, cfg.namespace, appId));
    });
  }
  const firstRole = app.roles[0]?.name ?? '';
  app.roles.forEach((role, roleIdx) => {
    for (let replicaId = 0; replicaId < role.numReplicas; replicaId++) {
      const isRank0 = roleIdx === 0 && replicaId === 0;
      const replicaRole = applyMacros(role, {
        imgRoot: '',
        appId,
        replicaId: String(replicaId),
        rank0Env: isRank0 ? RANK0_ENV : hostsEnvName(firstRole),
      });
      if (isRank0) replicaRole.env[RANK0_ENV] = 'localhost';
      const name = mcadCleanupStr(`${appId}-${replicaId}`);
      const pod = mcadPod(name, appId, replicaRole, cfg, workspace);
      const labels: Record<string, string> = {
        ...objectLabels(app, appId),
        [LABELS.version]: K8S_TORCHX_VERSION,
        [LABELS.appName]: app.name,
        [LABELS.roleIndex]: String(roleIdx),
        [LABELS.roleName]: role.name,
        [LABELS.replicaId]: String(replicaId),
      };
      if (cfg.coscheduler_name !== null) labels['pod-group.scheduling.sigs.k8s.io'] = `${appId}-pg${roleIdx}`;
      (pod.metadata as { labels: Record<string, string> }).labels = labels;
      items.push({ replicas: 1, generictemplate: pod });
    }
  });
  items.push(headlessService(app, appId, cfg.namespace, servicePort(app)));
  const spec: K8sObject = { resources: { GenericItems: items } };
  if (cfg.priority !== null) spec.priority = cfg.priority;
  const retries = Math.min(...app.roles.map((r) => r.maxRetries));
  if (retries > 0) {
    spec.schedulingSpec = {
      minAvailable: app.roles.reduce((sum, r) => sum + r.numReplicas, 0),
      requeuing: {
        timeInSeconds: 300,
        maxTimeInSeconds: 0,
        growthType: 'exponential',
        maxNumRequeuings: retries,
      },
    };
  }
  const resource = {
    apiVersion: 'workload.codeflare.dev/v1beta1',
    kind: 'AppWrapper',
    metadata: { name: appId, namespace: cfg.namespace },
    spec,
  };
  return { app, resource };
}

/**
 * Translates an app into the `kubernetes_mcad` request (TorchX `KubernetesMCADScheduler._submit_dryrun`),
 * every pod starting in `workspace` when one is given. Pure.
 */
export function translateKubernetesMcadApp(
  app: AppDef,
  cfg: KubernetesMcadOpts,
  namer?: McadUniqueNamer,
  workspace?: KubeWorkspace,
): { app: AppDef; request: KubernetesMcadRequest } {
  const pushed = withPushedImages(app, cfg.image_repo);
  const wrapped = appWrapper(pushed.app, cfg, namer, workspace);
  return {
    app: wrapped.app,
    request: { namespace: cfg.namespace, resource: wrapped.resource, imagesToPush: pushed.imagesToPush },
  };
}
