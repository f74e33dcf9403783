/**
 * kubernetes: TorchX's Volcano Job for dry runs; run, describe, list, cancel and logs once a cluster is
 * configured (`config.kubernetes`: a kubeconfig, or an EKS cluster).
 */
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import {
  eksToken,
  type KubeAccess,
  KubeApiClient,
  KubernetesScheduler,
  loadKubeConfig,
} from '../../lib/schedulers/kubernetes/index.js';
import type { SchedulerFactory } from '../../lib/schedulers/registry.js';
import type { FunctionConfig } from '../shared/config.js';
import type { SchedulerDeps } from './scheduler-module.js';
import type { KubernetesSettings } from './settings.js';

/**
 * The Kubernetes API access the settings configure: the kubeconfig's current context, or the EKS cluster
 * (tokens signed with the process's AWS credentials); undefined when neither is set (dry runs only). `list`
 * reads the settings' namespace, else the kubeconfig context's, else `default`.
 */
export function kubeAccess(settings: KubernetesSettings): KubeAccess | undefined {
  const { namespace, eks } = settings;
  if (settings.kubeconfig !== undefined) {
    const context = loadKubeConfig(settings.kubeconfig, {
      ...(settings.awsRegion === undefined ? {} : { defaultRegion: settings.awsRegion }),
    });
    return { client: new KubeApiClient(context.connection), namespace: namespace ?? context.namespace };
  }
  if (eks === undefined) return undefined;
  const credentials = defaultProvider();
  const client = new KubeApiClient({
    server: eks.endpoint,
    ...(eks.caBase64 ? { ca: Buffer.from(eks.caBase64, 'base64').toString('utf8') } : {}),
    token: () => eksToken({ clusterName: eks.cluster, region: eks.region, credentials }),
  });
  return { client, namespace: namespace ?? 'default' };
}

const accessByConfig = new WeakMap<FunctionConfig, { value: KubeAccess | undefined }>();
/** The Kubernetes API access of a configuration, built once (kubernetes and kubernetes_mcad share it). */
export function sharedKubeAccess(config: FunctionConfig): KubeAccess | undefined {
  let access = accessByConfig.get(config);
  if (access === undefined) {
    access = { value: kubeAccess(config.kubernetes) };
    accessByConfig.set(config, access);
  }
  return access.value;
}

/**
 * What both Kubernetes schedulers are built with: the configured cluster's API access (none: dry runs only)
 * and the deployment's workspace fetch image (none: the pinned default).
 */
export function kubeOptions(deps: SchedulerDeps): { access?: KubeAccess; workspaceFetchImage?: string } {
  const access = sharedKubeAccess(deps.config);
  const { workspaceFetchImage } = deps.deployment;
  return {
    ...(access === undefined ? {} : { access }),
    ...(workspaceFetchImage === undefined ? {} : { workspaceFetchImage }),
  };
}

/** The kubernetes factory (TorchX's Volcano Job; the API calls when a cluster is configured). */
export function create(deps: SchedulerDeps): SchedulerFactory {
  return (ctx) => new KubernetesScheduler(ctx, kubeOptions(deps));
}
