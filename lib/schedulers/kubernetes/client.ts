/**
 * A small client of the Kubernetes REST API for what TorchX's Kubernetes schedulers call: create, get, list
 * by label and delete a namespaced custom object (Volcano `Job`, MCAD `AppWrapper`), and read a pod's log.
 * It speaks HTTPS with the cluster's CA, a bearer token (static or refreshed per request, e.g. an EKS token)
 * and/or a client certificate, and maps Kubernetes `Status` failures to the scheduler errors.
 *
 * @module
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { ValidationError } from '../../specs/index.js';
import {
  BackendAccessDeniedError,
  BackendConflictError,
  BackendError,
  BackendValidationError,
} from '../errors.js';
import { httpExchange } from '../http-exchange.js';
import type { K8sObject } from './pod.js';

/** How to reach and authenticate to one API server. */
export interface KubeConnection {
  /** `https://host[:port]` (a path prefix is kept); `http:` only for tests and local proxies. */
  server: string;
  /** PEM of the CA that signed the server's certificate; the system CAs when absent. */
  ca?: string;
  /** Skip verifying the server's certificate (kubeconfig `insecure-skip-tls-verify`). */
  insecureSkipTlsVerify?: boolean;
  /** PEM client certificate and key (kubeconfig `client-certificate-data`/`client-key-data`). */
  clientCert?: string;
  clientKey?: string;
  /** A bearer token, or a function giving a fresh one for each request (EKS tokens live 60 s). */
  token?: string | (() => Promise<string>);
}

/** A namespaced custom resource type. */
export interface KubeResourceRef {
  group: string;
  version: string;
  plural: string;
}

/** Options of {@link KubeApiClient}. */
export interface KubeApiClientOptions {
  /** Per-request timeout; 30 s by default. */
  timeoutMs?: number;
}

/** A Kubernetes `Status` (the body of every failed call). */
interface KubeStatus {
  kind?: string;
  message?: string;
  reason?: string;
  code?: number;
}

/** RFC 1123 names as Kubernetes requires for namespaces and object names (no `/`, no `..`). */
const NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

/**
 * Checks a namespace or object name before it goes into a URL path.
 *
 * @throws ValidationError naming `field` for anything Kubernetes would not accept as a name.
 */
export function checkKubeName(field: string, value: string): string {
  if (!NAME.test(value) || value.includes('..')) {
    throw ValidationError.forField(
      field,
      `'${value}' is not a Kubernetes name (lower-case letters, digits, '-' and '.', at most 253 characters)`,
    );
  }
  return value;
}

/**
 * The Kubernetes API client.
 *
 * @example
 * ```ts
 * const kube = new KubeApiClient({ server: 'https://abc.gr7.us-west-2.eks.amazonaws.com', ca, token: () => eksToken(...) });
 * await kube.create(VOLCANO_JOBS, 'default', job);
 * ```
 */
export class KubeApiClient {
  private readonly base: URL;
  private readonly timeoutMs: number;

  constructor(
    private readonly connection: KubeConnection,
    options: KubeApiClientOptions = {},
  ) {
    this.base = new URL(connection.server);
    if (this.base.protocol !== 'https:' && this.base.protocol !== 'http:') {
      throw ValidationError.forField(
        'server',
        `'${connection.server}' must be an https:// URL of the API server`,
      );
    }
    this.timeoutMs = options.timeoutMs ?? 30_000;
  }

  /** The API server this client talks to. */
  get server(): string {
    return this.base.origin;
  }

  private objectsPath(ref: KubeResourceRef, namespace: string): string {
    return `/apis/${ref.group}/${ref.version}/namespaces/${checkKubeName('namespace', namespace)}/${ref.plural}`;
  }

  /** Creates a namespaced custom object; returns the object the server stored. */
  async create(ref: KubeResourceRef, namespace: string, body: K8sObject): Promise<K8sObject> {
    const { status, text } = await this.send('POST', this.objectsPath(ref, namespace), {}, body);
    if (status === 404) {
      throw new BackendError(
        `the Kubernetes API at ${this.server} does not serve ${ref.plural}.${ref.group}/${ref.version} in ` +
          `namespace ${namespace}: ${this.statusOf(text).message ?? 'not found'}; install its operator ` +
          '(Volcano or MCAD) and check the namespace',
        false,
      );
    }
    return this.parse(status, text, `create ${ref.plural}`) as K8sObject;
  }

  /** One custom object; undefined when it does not exist. */
  async get(ref: KubeResourceRef, namespace: string, name: string): Promise<K8sObject | undefined> {
    const path = `${this.objectsPath(ref, namespace)}/${checkKubeName('name', name)}`;
    const { status, text } = await this.send('GET', path, {});
    if (status === 404) return undefined;
    return this.parse(status, text, `get ${ref.plural}`) as K8sObject;
  }

  /** The pods of a namespace that match `labelSelector` (first page of at most 50; enough to find one waiting). */
  async listPods(namespace: string, labelSelector: string): Promise<K8sObject[]> {
    const path = `/api/v1/namespaces/${checkKubeName('namespace', namespace)}/pods`;
    const { status, text } = await this.send('GET', path, { labelSelector, limit: '50' });
    return ((this.parse(status, text, 'list pods') as { items?: K8sObject[] }).items ?? []) as K8sObject[];
  }

  /** The custom objects of a namespace, with the given label selector if any (all pages). */
  async list(ref: KubeResourceRef, namespace: string, labelSelector?: string): Promise<K8sObject[]> {
    const items: K8sObject[] = [];
    let next: string | undefined;
    do {
      const query: Record<string, string> = { limit: '500' };
      if (labelSelector !== undefined) query.labelSelector = labelSelector;
      if (next) query.continue = next;
      const { status, text } = await this.send('GET', this.objectsPath(ref, namespace), query);
      const page = this.parse(status, text, `list ${ref.plural}`) as {
        items?: K8sObject[];
        metadata?: { continue?: string };
      };
      items.push(...(page.items ?? []));
      next = page.metadata?.continue || undefined;
    } while (next);
    return items;
  }

  /** Deletes a custom object (its pods go with it); false when it did not exist. */
  async delete(ref: KubeResourceRef, namespace: string, name: string): Promise<boolean> {
    const path = `${this.objectsPath(ref, namespace)}/${checkKubeName('name', name)}`;
    const { status, text } = await this.send('DELETE', path, { propagationPolicy: 'Background' });
    if (status === 404) return false;
    this.parse(status, text, `delete ${ref.plural}`);
    return true;
  }

  /** A pod's log (all of it, or the last `sinceSeconds`); undefined when the pod does not exist. */
  async podLog(
    namespace: string,
    pod: string,
    options: { timestamps?: boolean; sinceSeconds?: number } = {},
  ): Promise<string | undefined> {
    const path = `/api/v1/namespaces/${checkKubeName('namespace', namespace)}/pods/${checkKubeName('pod', pod)}/log`;
    const query: Record<string, string> = {};
    if (options.timestamps) query.timestamps = 'true';
    if (options.sinceSeconds !== undefined)
      query.sinceSeconds = String(Math.max(1, Math.ceil(options.sinceSeconds)));
    const { status, text } = await this.send('GET', path, query);
    if (status === 404) return undefined;
    if (status >= 200 && status < 300) return text;
    this.parse(status, text, 'read pods/log');
    return undefined;
  }

  private statusOf(text: string): KubeStatus {
    try {
      const parsed = JSON.parse(text) as unknown;
      return parsed !== null && typeof parsed === 'object' ? (parsed as KubeStatus) : {};
    } catch {
      return {};
    }
  }

  private parse(status: number, text: string, action: string): unknown {
    if (status >= 200 && status < 300) {
      try {
        return JSON.parse(text) as unknown;
      } catch (cause) {
        throw new BackendError(`the Kubernetes API at ${this.server} answered ${action} with no JSON`, true, {
          cause,
        });
      }
    }
    const body = this.statusOf(text);
    const message = `Kubernetes ${action} at ${this.server} failed (${status} ${body.reason ?? ''}): ${body.message ?? text.slice(0, 200)}`;
    if (status === 401) {
      throw new BackendAccessDeniedError(
        `${message}; the credentials were not accepted: refresh the kubeconfig or token`,
      );
    }
    if (status === 403)
      throw new BackendAccessDeniedError(`${message}; grant this identity RBAC for ${action}`);
    if (status === 409) throw new BackendConflictError(message);
    if (status === 400 || status === 422) throw new BackendValidationError(message);
    throw new BackendError(message, status === 429 || status >= 500);
  }

  private async send(
    method: string,
    path: string,
    query: Record<string, string>,
    body?: unknown,
  ): Promise<{ status: number; text: string }> {
    const url = new URL(this.base.href);
    url.pathname = `${this.base.pathname.replace(/\/$/, '')}${path}`;
    for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
    const headers: Record<string, string> = { accept: 'application/json' };
    const { token } = this.connection;
    if (token !== undefined)
      headers.authorization = `Bearer ${typeof token === 'string' ? token : await token()}`;
    const payload = body === undefined ? undefined : JSON.stringify(body);
    if (payload !== undefined) headers['content-type'] = 'application/json';
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const tls =
      url.protocol === 'https:'
        ? {
            ...(this.connection.ca ? { ca: this.connection.ca } : {}),
            ...(this.connection.clientCert ? { cert: this.connection.clientCert } : {}),
            ...(this.connection.clientKey ? { key: this.connection.clientKey } : {}),
            rejectUnauthorized: this.connection.insecureSkipTlsVerify !== true,
          }
        : {};
    const { status, body: answer } = await httpExchange(
      (onResponse) => send(url, { method, headers, timeout: this.timeoutMs, ...tls }, onResponse),
      { timeoutMs: this.timeoutMs, target: `the Kubernetes API at ${this.server}`, payload },
    );
    return { status, text: answer.toString('utf8') };
  }
}
