/**
 * The schedulers ported from TorchX beyond AWS: `lsf` (dry runs only), `local_docker` (dry runs; runs in
 * local mode when a Docker daemon is there), `kubernetes` and `kubernetes_mcad` (dry runs; run, describe,
 * list, cancel and logs once a cluster is configured with TXS_KUBECONFIG, or TXS_EKS_CLUSTER and
 * TXS_EKS_ENDPOINT).
 */
import { existsSync } from 'node:fs';
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import {
  eksToken,
  type KubeAccess,
  KubeApiClient,
  KubernetesScheduler,
  loadKubeConfig,
} from '../../../lib/schedulers/kubernetes/index.js';
import { KubernetesMcadScheduler } from '../../../lib/schedulers/kubernetes-mcad/index.js';
import { DockerEngine, LocalDockerScheduler } from '../../../lib/schedulers/local-docker/index.js';
import { LsfScheduler } from '../../../lib/schedulers/lsf/index.js';
import type { SchedulerFactory } from '../../../lib/schedulers/registry.js';
import { ValidationError } from '../../../lib/specs/index.js';
import { ENV } from '../env-names.js';
import type { BackendDeps } from './deps.js';

/** The lsf factory (dry runs: TorchX's bsub script). */
export function lsfFactory(_deps: BackendDeps): SchedulerFactory {
  return (ctx) => new LsfScheduler(ctx);
}

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
function sharedKubeAccess(): KubeAccess | undefined {
  access ??= { value: kubeAccessFromEnv() };
  return access.value;
}

/** The kubernetes factory (TorchX's Volcano Job; the API calls when a cluster is configured). */
export function kubernetesFactory(_deps: BackendDeps): SchedulerFactory {
  return (ctx) => {
    const kube = sharedKubeAccess();
    return new KubernetesScheduler(ctx, kube ? { access: kube } : {});
  };
}

/** The kubernetes_mcad factory (TorchX's AppWrapper; the API calls when a cluster is configured). */
export function kubernetesMcadFactory(_deps: BackendDeps): SchedulerFactory {
  return (ctx) => {
    const kube = sharedKubeAccess();
    return new KubernetesMcadScheduler(ctx, kube ? { access: kube } : {});
  };
}

/**
 * The Docker Engine socket local mode uses: a `unix://` DOCKER_HOST, else /var/run/docker.sock; undefined
 * when it does not exist (no daemon) or DOCKER_HOST is not a Unix socket.
 */
export function dockerSocketFromEnv(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const host = env.DOCKER_HOST;
  if (host && !host.startsWith('unix://')) return undefined;
  const path = host ? host.slice('unix://'.length) : '/var/run/docker.sock';
  return existsSync(path) ? path : undefined;
}

/**
 * The local_docker factory: TorchX's containers; in local mode with a Docker daemon it runs them. `copy_env`
 * copies from this process's environment in local mode only (the user's own shell; never AWS_* or TXS_*);
 * in the deployed stack it copies nothing and runs nothing.
 */
export function localDockerFactory(_deps: BackendDeps): SchedulerFactory {
  return (ctx) => {
    if (!process.env[ENV.localDataDir]) return new LocalDockerScheduler(ctx);
    const socket = dockerSocketFromEnv();
    return new LocalDockerScheduler(ctx, {
      hostEnv: { ...process.env },
      ...(socket ? { engine: new DockerEngine(socket) } : {}),
    });
  };
}
