/**
 * What the slurm and Kubernetes schedulers are configured with: read from the environment (names in
 * env-names.ts) and checked with the rest of the function's configuration (functions/shared/config.ts), once
 * per cold start. A scheduler module gets these settings from its SchedulerDeps; none reads the environment.
 */
import { ENV } from '../shared/env-names.js';

/** How the slurmrestd client authenticates: a token, or the cluster's JWT key (from a file, inline, or a secret). */
export type SlurmAuthSetting =
  | { readonly token: string }
  | { readonly jwtKeyFile: string }
  | { readonly jwtKeyBase64: string }
  | { readonly jwtKeySecretArn: string };

/** The slurm scheduler's settings; without `rest`, it only dry-runs. */
export interface SlurmSettings {
  /** slurmrestd: its base URL, the user jobs are submitted as, and how to authenticate. */
  readonly rest?: { readonly url: string; readonly user: string; readonly auth: SlurmAuthSetting };
  readonly workDir?: string;
  readonly logRoot?: string;
  readonly gpusPerNode: boolean;
}

/** The Kubernetes schedulers' settings; without `kubeconfig` or `eks`, they only dry-run. */
export interface KubernetesSettings {
  /** A kubeconfig file whose current context is the cluster (takes precedence over `eks`). */
  readonly kubeconfig?: string;
  /** An EKS cluster, reached with tokens signed by the function's AWS credentials. */
  readonly eks?: {
    readonly cluster: string;
    readonly endpoint: string;
    readonly region: string;
    readonly caBase64?: string;
  };
  /** The namespace `list` reads; else the kubeconfig context's, else `default`. */
  readonly namespace?: string;
  /** The AWS region for a kubeconfig's `aws eks get-token` users that name none (AWS_REGION). */
  readonly awsRegion?: string;
}

type Env = Readonly<Record<string, string | undefined>>;

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const SECRET_ARN = /^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:.+$/;
// A Kubernetes namespace: an RFC 1123 label.
const NAMESPACE = /^[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?$/;

const value = (env: Env, name: string): string | undefined => env[name] || undefined;

function isHttpUrl(raw: string, protocols: readonly string[]): boolean {
  return URL.canParse(raw) && protocols.includes(new URL(raw).protocol);
}

function base64Problem(name: string, raw: string | undefined): string[] {
  return raw === undefined || BASE64.test(raw.trim()) ? [] : [`${name} is not base64`];
}

function slurmAuth(env: Env, problems: string[]): SlurmAuthSetting | undefined {
  const token = value(env, ENV.slurmToken);
  if (token) return { token };
  const jwtKeyFile = value(env, ENV.slurmJwtKeyFile);
  if (jwtKeyFile) return { jwtKeyFile };
  const jwtKeyBase64 = value(env, ENV.slurmJwtKey);
  if (jwtKeyBase64) {
    problems.push(...base64Problem(ENV.slurmJwtKey, jwtKeyBase64));
    return { jwtKeyBase64 };
  }
  const jwtKeySecretArn = value(env, ENV.slurmJwtKeySecretArn);
  if (jwtKeySecretArn && !SECRET_ARN.test(jwtKeySecretArn))
    problems.push(
      `${ENV.slurmJwtKeySecretArn}='${jwtKeySecretArn}' is not a Secrets Manager secret ARN (arn:aws:secretsmanager:<region>:<account>:secret:<name>)`,
    );
  return jwtKeySecretArn ? { jwtKeySecretArn } : undefined;
}

/** Reads the slurm settings from `env`, adding to `problems` what is wrong (each naming its variable). */
export function readSlurmSettings(env: Env, problems: string[]): SlurmSettings {
  const gpus = value(env, ENV.slurmGpusPerNode) ?? 'false';
  if (gpus !== 'true' && gpus !== 'false')
    problems.push(`${ENV.slurmGpusPerNode}='${gpus}' must be true or false`);
  const url = value(env, ENV.slurmUrl);
  const user = value(env, ENV.slurmUser);
  const auth = slurmAuth(env, problems);
  let rest: SlurmSettings['rest'];
  if (url !== undefined) {
    if (!isHttpUrl(url, ['http:', 'https:']))
      problems.push(`${ENV.slurmUrl}='${url}' is not an http(s) URL (e.g. http://head:6820)`);
    if (user === undefined) problems.push(`${ENV.slurmUrl} is set: also set ${ENV.slurmUser}`);
    if (auth === undefined)
      problems.push(
        `${ENV.slurmUrl} is set: also set ${ENV.slurmToken}, ${ENV.slurmJwtKeyFile}, ${ENV.slurmJwtKey} or ${ENV.slurmJwtKeySecretArn}`,
      );
    if (user !== undefined && auth !== undefined) rest = { url, user, auth };
  }
  const workDir = value(env, ENV.slurmWorkDir);
  const logRoot = value(env, ENV.slurmLogRoot);
  return {
    gpusPerNode: gpus === 'true',
    ...(rest === undefined ? {} : { rest }),
    ...(workDir === undefined ? {} : { workDir }),
    ...(logRoot === undefined ? {} : { logRoot }),
  };
}

/** Reads the Kubernetes settings from `env`, adding to `problems` what is wrong (each naming its variable). */
export function readKubernetesSettings(env: Env, problems: string[]): KubernetesSettings {
  const awsRegion = value(env, 'AWS_REGION') ?? value(env, 'AWS_DEFAULT_REGION');
  const namespace = value(env, ENV.kubeNamespace);
  if (namespace !== undefined && !NAMESPACE.test(namespace))
    problems.push(
      `${ENV.kubeNamespace}='${namespace}' is not a namespace (lowercase letters, digits and '-', at most 63)`,
    );
  const kubeconfig = value(env, ENV.kubeconfig);
  const cluster = value(env, ENV.eksCluster);
  let eks: KubernetesSettings['eks'];
  if (kubeconfig === undefined && cluster !== undefined) {
    const endpoint = value(env, ENV.eksEndpoint);
    const caBase64 = value(env, ENV.eksCaData);
    problems.push(...base64Problem(ENV.eksCaData, caBase64));
    if (endpoint === undefined || !isHttpUrl(endpoint, ['https:']))
      problems.push(
        `${ENV.eksCluster} is set: set ${ENV.eksEndpoint} to the cluster's https API endpoint${endpoint === undefined ? '' : ` (not '${endpoint}')`}`,
      );
    if (awsRegion === undefined) problems.push(`${ENV.eksCluster} is set: also set AWS_REGION`);
    if (endpoint !== undefined && awsRegion !== undefined)
      eks = { cluster, endpoint, region: awsRegion, ...(caBase64 === undefined ? {} : { caBase64 }) };
  }
  return {
    ...(kubeconfig === undefined ? {} : { kubeconfig }),
    ...(eks === undefined ? {} : { eks }),
    ...(namespace === undefined ? {} : { namespace }),
    ...(awsRegion === undefined ? {} : { awsRegion }),
  };
}
