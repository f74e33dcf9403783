/**
 * Reads a kubeconfig (its current context) into a {@link KubeConnection}: server, CA, bearer token or token
 * file, client certificate and key (inline `-data` or file paths), `insecure-skip-tls-verify`, and the
 * context's namespace. A user whose credentials come from `aws eks get-token` (the exec plugin `aws eks
 * update-kubeconfig` writes) gets EKS tokens made here, with the AWS SDK's credential chain; other exec
 * plugins are not run.
 *
 * The file is YAML, as kubectl writes it (`~/.kube/config`), or JSON (YAML's subset); it is parsed with the
 * `yaml` library, which this module alone loads — and it is loaded only with the Kubernetes schedulers.
 *
 * @module
 */
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { parse } from 'yaml';
import { ValidationError } from '../../specs/index.js';
import type { KubeConnection } from './client.js';
import { type EksCredentials, eksToken } from './eks-token.js';

/** The parts of a kubeconfig this reads. */
interface KubeConfigFile {
  'current-context'?: string;
  contexts?: { name: string; context: { cluster: string; user: string; namespace?: string } }[];
  clusters?: {
    name: string;
    cluster: {
      server: string;
      'certificate-authority-data'?: string;
      'certificate-authority'?: string;
      'insecure-skip-tls-verify'?: boolean;
    };
  }[];
  users?: {
    name: string;
    user: {
      token?: string;
      tokenFile?: string;
      'client-certificate-data'?: string;
      'client-certificate'?: string;
      'client-key-data'?: string;
      'client-key'?: string;
      exec?: { command?: string; args?: string[]; env?: { name: string; value: string }[] | null };
    };
  }[];
}

/** A connection and the namespace of the kubeconfig's current context. */
export interface KubeConfigContext {
  connection: KubeConnection;
  /** The context's namespace; `default` when it names none. */
  namespace: string;
  /** The context's name. */
  context: string;
}

/** What reading a kubeconfig may be given (tests inject credentials). */
export interface KubeConfigOptions {
  /** AWS credentials for `aws eks get-token` users; the SDK's default chain otherwise. */
  awsCredentials?: () => Promise<EksCredentials>;
  /** The region when the exec args and env name none (the function's AWS_REGION). */
  defaultRegion?: string;
}

function fail(field: string, message: string): never {
  throw ValidationError.forField(`kubeconfig.${field}`, message);
}

function argAfter(args: readonly string[], flag: string): string | undefined {
  const i = args.indexOf(flag);
  if (i >= 0) return args[i + 1];
  const inline = args.find((a) => a.startsWith(`${flag}=`));
  return inline?.slice(flag.length + 1);
}

/**
 * The EKS token provider an `aws eks get-token` exec user stands for (cluster name from `--cluster-name`
 * or `--cluster-id`, region from `--region`, the exec env's `AWS_REGION`/`AWS_DEFAULT_REGION`, or the
 * default); undefined for any other exec plugin.
 */
export function eksExecTokenProvider(
  exec: { command?: string; args?: string[]; env?: { name: string; value: string }[] | null },
  options: KubeConfigOptions = {},
): (() => Promise<string>) | undefined {
  const args = exec.args ?? [];
  const isAws = (exec.command ?? '').split('/').pop() === 'aws';
  const eks = args.indexOf('eks');
  if (!isAws || eks < 0 || args[eks + 1] !== 'get-token') return undefined;
  const clusterName = argAfter(args, '--cluster-name') ?? argAfter(args, '--cluster-id');
  if (!clusterName) return undefined;
  const env = Object.fromEntries((exec.env ?? []).map((e) => [e.name, e.value]));
  const region =
    argAfter(args, '--region') ?? env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? options.defaultRegion;
  if (!region) {
    fail(
      'users.exec',
      `cannot tell the region of EKS cluster ${clusterName}: add --region to the exec args or set AWS_REGION`,
    );
  }
  const profile = env.AWS_PROFILE;
  // The SDK's default chain (what `fromNodeProviderChain` wraps), imported from its own package: in a
  // function, the environment's credentials (its role's) come first.
  const credentials = options.awsCredentials ?? defaultProvider(profile ? { profile } : {});
  return () => eksToken({ clusterName, region, credentials });
}

/**
 * Reads the current context of a kubeconfig object.
 *
 * @param baseDir where relative file paths in the kubeconfig are resolved (the kubeconfig's directory).
 * @throws ValidationError naming the kubeconfig field that is missing or unusable.
 */
export function kubeConfigContext(
  config: unknown,
  baseDir: string,
  options: KubeConfigOptions = {},
): KubeConfigContext {
  if (config === null || typeof config !== 'object') fail('', 'is not a kubeconfig object');
  const file = config as KubeConfigFile;
  const contextName = file['current-context'];
  if (!contextName) fail('current-context', 'is not set; run `kubectl config use-context <name>`');
  const context = file.contexts?.find((c) => c.name === contextName)?.context;
  if (!context) fail('contexts', `has no context named ${contextName}`);
  const cluster = file.clusters?.find((c) => c.name === context.cluster)?.cluster;
  if (!cluster?.server) fail('clusters', `has no cluster ${context.cluster} with a server`);
  const user = file.users?.find((u) => u.name === context.user)?.user ?? {};
  const read = (path: string) => readFileSync(isAbsolute(path) ? path : resolve(baseDir, path), 'utf8');
  const pem = (data: string | undefined, path: string | undefined) =>
    data ? Buffer.from(data, 'base64').toString('utf8') : path ? read(path) : undefined;

  const connection: KubeConnection = { server: cluster.server };
  const ca = pem(cluster['certificate-authority-data'], cluster['certificate-authority']);
  if (ca) connection.ca = ca;
  if (cluster['insecure-skip-tls-verify']) connection.insecureSkipTlsVerify = true;
  const cert = pem(user['client-certificate-data'], user['client-certificate']);
  const key = pem(user['client-key-data'], user['client-key']);
  if (cert) connection.clientCert = cert;
  if (key) connection.clientKey = key;
  if (user.token) connection.token = user.token;
  else if (user.tokenFile) {
    const tokenFile = user.tokenFile;
    connection.token = async () => read(tokenFile).trim(); // re-read: projected tokens rotate
  } else if (user.exec) {
    const provider = eksExecTokenProvider(user.exec, options);
    if (!provider) {
      fail(
        'users.exec',
        `the user ${context.user} gets credentials from '${user.exec.command ?? ''}', which torchx-serverless does ` +
          'not run; use a token, a client certificate, or `aws eks get-token`',
      );
    }
    connection.token = provider;
  }
  return { connection, namespace: context.namespace ?? 'default', context: contextName };
}

/**
 * Reads a kubeconfig file's current context (YAML, as kubectl writes it, or JSON).
 *
 * @throws ValidationError when the file is not YAML (naming the line of the first error) or is unusable.
 */
export function loadKubeConfig(path: string, options: KubeConfigOptions = {}): KubeConfigContext {
  const text = readFileSync(path, 'utf8');
  let parsed: unknown;
  try {
    parsed = parse(text);
  } catch (error) {
    fail('', `${path} is not a YAML kubeconfig: ${(error as Error).message.split('\n')[0]}`);
  }
  return kubeConfigContext(parsed, dirname(path), options);
}
