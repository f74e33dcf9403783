/**
 * kubernetes: TorchX's Volcano Job for dry runs; run, describe, list, cancel and logs once a cluster is
 * configured with TXS_KUBECONFIG, or TXS_EKS_CLUSTER and TXS_EKS_ENDPOINT.
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
import { ValidationError } from '../../lib/specs/index.js';
import { ENV } from '../shared/env-names.js';

/**
 * The Kubernetes API access configured by environment: a JSON kubeconfig (TXS_KUBECONFIG), or an EKS cluster
 * (TXS_EKS_CLUSTER, TXS_EKS_ENDPOINT, TXS_EKS_CA_DATA; tokens signed with the process's AWS credentials);
 * undefined when neither is set (dry runs only). `list` reads TXS_K8S_NAMESPACE, else the kubeconfig
 * context's namespace, else `default`.
 */
export function kubeAccessFromEnv(env: NodeJS.ProcessEnv = process.env): KubeAccess | undefined {
  const namespaceOverride = env[ENV.kubeNamespace];
  const kubeconfig = env[ENV.kubeconfig];
  if (kubeconfig) {
    const context = loadKubeConfig(kubeconfig);
    return {
      client: new KubeApiClient(context.connection),
      namespace: namespaceOverride || context.namespace,
    };
  }
  const clusterName = env[ENV.eksCluster];
  if (!clusterName) return undefined;
  const server = env[ENV.eksEndpoint];
  const region = env.AWS_REGION ?? env.AWS_DEFAULT_REGION;
  if (!server || !region) {
    throw new ValidationError(
      `${ENV.eksCluster} is set: also set ${ENV.eksEndpoint} (the cluster's API endpoint) and AWS_REGION`,
    );
  }
  const caData = env[ENV.eksCaData];
  const credentials = defaultProvider();
  const client = new KubeApiClient({
    server,
    ...(caData ? { ca: Buffer.from(caData, 'base64').toString('utf8') } : {}),
    token: () => eksToken({ clusterName, region, credentials }),
  });
  return { client, namespace: namespaceOverride || 'default' };
}

let access: { value: KubeAccess | undefined } | undefined;
/** The process's Kubernetes API access, read from the environment once (shared with kubernetes_mcad). */
export function sharedKubeAccess(): KubeAccess | undefined {
  access ??= { value: kubeAccessFromEnv() };
  return access.value;
}

/** The kubernetes factory (TorchX's Volcano Job; the API calls when a cluster is configured). */
export function create(): SchedulerFactory {
  return (ctx) => {
    const kube = sharedKubeAccess();
    return new KubernetesScheduler(ctx, kube ? { access: kube } : {});
  };
}
