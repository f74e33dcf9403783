/**
 * What the `kubernetes` and `kubernetes_mcad` schedulers share once a Kubernetes API client is configured:
 * app ids `<namespace>:<name>` (TorchX's), create on schedule, get on describe, delete on cancel, list of
 * the namespace's objects that TorchX made, and pod logs. Without a client they stay dry-run only.
 *
 * @module
 */
import {
  type AppDef,
  AppDryRunInfo,
  type Cfg,
  type DescribeAppResponse,
  type JobWorkspace,
  type ListAppResponse,
  type RunOpts,
  ValidationError,
} from '../../specs/index.js';
import { BackendConflictError } from '../errors.js';
import type { LogPage, LogPageRequest } from '../logs.js';
import type { SchedulerCapabilities, SchedulerContext } from '../scheduler.js';
import { TranslatingScheduler } from '../translating.js';
import { DEFAULT_WORKSPACE_FETCH_IMAGE } from '../workspace.js';
import { checkKubeName, type KubeApiClient, type KubeResourceRef } from './client.js';
import { type K8sObject, LABELS } from './pod.js';
import { type PodLike, podWaitReasonOf } from './state.js';
import { type KubeWorkspace, kubeWorkspaceOf } from './workspace.js';

/** A request holding a namespaced custom object. */
export interface KubeObjectRequest {
  namespace: string;
  resource: K8sObject;
}

/** The Kubernetes API access of a scheduler. */
export interface KubeAccess {
  client: KubeApiClient;
  /** The namespace `list` reads (TorchX: the kubeconfig context's namespace). */
  namespace: string;
}

/** Construction options of a Kubernetes scheduler, whose app names `Namer` makes. */
export interface KubeSchedulerOptions<Namer> {
  /** Makes the app's unique name; TorchX's `make_unique` by default. */
  uniqueNamer?: Namer;
  /** The Kubernetes API; without it the scheduler answers dry runs only. */
  access?: KubeAccess;
  /** The image of the init container that copies a workspace from S3; the pinned AWS CLI by default. */
  workspaceFetchImage?: string;
}

/** What a Kubernetes scheduler creates, and TorchX's translation of an app into it. */
export interface KubeResourceKind<Opts extends Cfg, Request extends KubeObjectRequest> {
  /** The custom resource the scheduler creates. */
  ref: KubeResourceRef;
  /** What TorchX calls the resource (`Volcano Job`), for the answer without a cluster. */
  name: string;
  /** The scheduler's run options. */
  runOpts(): RunOpts;
  /** Translates an app (pure), every pod starting in `workspace` when one is given. */
  translate(app: AppDef, cfg: Opts, workspace: KubeWorkspace | undefined): { app: AppDef; request: Request };
}

/**
 * Splits a TorchX Kubernetes app id `<namespace>:<name>`.
 *
 * @throws ValidationError naming `appId` for anything else.
 */
export function parseKubeAppId(appId: string): { namespace: string; name: string } {
  const parts = appId.split(':');
  if (parts.length !== 2) {
    throw ValidationError.forField('appId', `'${appId}' is not <namespace>:<name>`);
  }
  const [namespace = '', name = ''] = parts;
  return { namespace: checkKubeName('appId', namespace), name: checkKubeName('appId', name) };
}

/** True when an object's first pod template carries TorchX's `managed-by` label. */
function madeByTorchx(object: K8sObject, templates: (o: K8sObject) => K8sObject[]): boolean {
  return templates(object).some((t) => {
    const labels = (t.metadata as { labels?: Record<string, string> } | undefined)?.labels;
    return labels?.[LABELS.organization] === 'torchx.pytorch.org';
  });
}

/** Base of the Kubernetes schedulers: dry runs always, the API calls when {@link KubeAccess} is given. */
export abstract class KubeScheduler<
  Opts extends Cfg,
  Request extends KubeObjectRequest,
> extends TranslatingScheduler<Opts, Request> {
  /** The custom resource the scheduler creates. */
  protected readonly ref: KubeResourceRef;
  /** The Kubernetes API, when one is configured. */
  protected readonly access: KubeAccess | undefined;
  /** The image of the init container that copies a workspace archive from S3 (the AWS CLI). */
  private readonly workspaceFetchImage: string;

  constructor(
    backend: string,
    context: SchedulerContext,
    private readonly kind: KubeResourceKind<Opts, Request>,
    options: Pick<KubeSchedulerOptions<unknown>, 'access' | 'workspaceFetchImage'>,
  ) {
    super(
      backend,
      context,
      'no Kubernetes cluster is configured (TXS_KUBECONFIG, or TXS_EKS_CLUSTER with TXS_EKS_ENDPOINT); run ' +
        `\`txs run --dryrun -s ${backend} ...\` and apply the request's \`resource\` with \`kubectl create -f\` ` +
        `(it is TorchX's ${kind.name}).`,
    );
    this.ref = kind.ref;
    this.access = options.access;
    this.workspaceFetchImage = options.workspaceFetchImage ?? DEFAULT_WORKSPACE_FETCH_IMAGE;
  }

  runOpts(): RunOpts {
    return this.kind.runOpts();
  }

  protected translate(app: AppDef, cfg: Opts, workspace?: JobWorkspace): AppDryRunInfo<Request> {
    const translated = this.kind.translate(app, cfg, this.workspaceOf(workspace));
    return new AppDryRunInfo(this.backend, translated.app, cfg, translated.request);
  }

  /**
   * Takes a workspace whose archive is in S3: each pod copies it in an init container with the pod's own
   * credentials (docs/workspaces.md).
   *
   * @throws ValidationError naming `workspace` for any other archive (a local server's file).
   */
  override checkWorkspace(workspace: JobWorkspace): void {
    this.workspaceOf(workspace);
  }

  /** The pod-side form of a checked workspace (undefined without one). */
  protected workspaceOf(workspace: JobWorkspace | undefined): KubeWorkspace | undefined {
    return workspace && kubeWorkspaceOf(workspace, this.backend, this.workspaceFetchImage);
  }

  /** The object's state and replicas (TorchX's `describe` of this scheduler). */
  protected abstract describeObject(appId: string, object: K8sObject): DescribeAppResponse;

  /** The pod templates of an object (to recognise TorchX's objects in `list`). */
  protected abstract podTemplates(object: K8sObject): K8sObject[];

  /** The AppState an object reports, for `list`. */
  protected abstract stateOfObject(object: K8sObject): DescribeAppResponse['state'];

  /** The pod that runs a replica (TorchX's pod naming of this scheduler). */
  protected abstract podName(name: string, role: string, replica: number): string;

  override capabilities(): SchedulerCapabilities {
    if (!this.access) return super.capabilities();
    return { ...super.capabilities(), cancel: true, logs: true, retries: true };
  }

  override appIdOf(dryrun: AppDryRunInfo<Request>): string {
    if (!this.access) return super.appIdOf(dryrun);
    const name = (dryrun.request.resource.metadata as { name: string }).name;
    return `${dryrun.request.namespace}:${name}`;
  }

  override async schedule(dryrun: AppDryRunInfo<Request>): Promise<string> {
    if (!this.access) return super.schedule(dryrun);
    const appId = this.appIdOf(dryrun);
    try {
      await this.access.client.create(this.ref, dryrun.request.namespace, dryrun.request.resource);
    } catch (error) {
      if (error instanceof BackendConflictError) {
        throw new BackendConflictError(
          `${this.ref.plural} ${appId} already exists; submit again (a new dry run gets a new name)`,
          { cause: error },
        );
      }
      throw error;
    }
    return appId;
  }

  /**
   * Describes the app; while it is PENDING, also why its pods wait ({@link podWaitReasonOf}: PodScheduled
   * False and its message, or a container's waiting reason), when the subclass knows how to select its pods
   * and the credentials may list them (without that permission the reason is left out).
   */
  override async describe(appId: string): Promise<DescribeAppResponse | undefined> {
    if (!this.access) return super.describe(appId);
    const { namespace, name } = parseKubeAppId(appId);
    const object = await this.access.client.get(this.ref, namespace, name);
    if (object === undefined) return undefined;
    const desc = this.describeObject(appId, object);
    const selector = this.podSelector(name);
    if (desc.state === 'PENDING' && selector !== undefined) {
      const pods = await this.access.client.listPods(namespace, selector).catch(() => []);
      const reason = podWaitReasonOf(pods as PodLike[], this.now());
      if (reason !== undefined) desc.stateReason = reason;
    }
    return desc;
  }

  /** The label selector of the app's pods, when this scheduler's operator labels them; none by default. */
  protected podSelector(_name: string): string | undefined {
    return undefined;
  }

  override async list(): Promise<ListAppResponse[]> {
    if (!this.access) return super.list();
    const { namespace } = this.access;
    const objects = await this.access.client.list(this.ref, namespace);
    return objects
      .filter((o) => madeByTorchx(o, (x) => this.podTemplates(x)))
      .map((o) => {
        const name = (o.metadata as { name: string }).name;
        return { appId: `${namespace}:${name}`, state: this.stateOfObject(o), appHandle: '<NOT_SET>', name };
      });
  }

  protected override async cancelExisting(appId: string, reason: string): Promise<void> {
    if (!this.access) return super.cancelExisting(appId, reason);
    const { namespace, name } = parseKubeAppId(appId);
    await this.access.client.delete(this.ref, namespace, name);
  }

  protected override async fetchLogPage(appId: string, request: LogPageRequest): Promise<LogPage> {
    if (!this.access) return super.fetchLogPage(appId, request);
    if (request.streams !== undefined && request.streams !== 'combined') {
      throw ValidationError.forField('streams', `${this.backend} only supports the combined log stream`);
    }
    const { namespace, name } = parseKubeAppId(appId);
    const pod = this.podName(name, request.role, request.replica ?? 0);
    const options: { sinceSeconds?: number } = {};
    if (request.since !== undefined) options.sinceSeconds = (this.now() - request.since.getTime()) / 1000;
    const text = (await this.access.client.podLog(namespace, pod, options)) ?? '';
    const lines = text === '' ? [] : text.replace(/\n$/, '').split('\n');
    return { lines, caughtUp: true };
  }
}
