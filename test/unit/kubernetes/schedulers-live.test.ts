/**
 * The Kubernetes schedulers with an API client, at the HTTP wire against a fake API server (no Kubernetes
 * API server can run here). Job and AppWrapper status bodies follow Volcano's `batch.volcano.sh/v1alpha1`
 * JobStatus and MCAD's AppWrapperStatus as their API references describe them.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { KubeApiClient, KubernetesScheduler } from '../../../lib/schedulers/kubernetes/index.js';
import { KubernetesMcadScheduler } from '../../../lib/schedulers/kubernetes-mcad/index.js';
import { compileLogFilter } from '../../../lib/schedulers/log-filter.js';
import { appOf, LEN_ALPHABET, SUFFIX } from '../torchx-golden/cases.js';
import { type FakeRoute, kubeStatus, startFakeKubeApi } from './fake-api-server.js';

const JOBS = '/apis/batch.volcano.sh/v1alpha1/namespaces/ml/jobs';
const WRAPPERS = '/apis/workload.codeflare.dev/v1beta1/namespaces/ml/appwrappers';

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

async function connect(route: FakeRoute) {
  const server = await startFakeKubeApi(route);
  close = server.close;
  return {
    access: { client: new KubeApiClient({ server: server.url, token: 't' }), namespace: 'ml' },
    seen: server.seen,
  };
}

const running = {
  state: { phase: 'Running' },
  running: 2,
  retryCount: 1,
  taskStatusCount: { 'echo-0': { phase: { Running: 1 } }, 'echo-1': { phase: { Succeeded: 1 } } },
};

describe('KubernetesScheduler with a cluster', () => {
  it('creates the dry run’s Volcano Job in its namespace and answers TorchX’s <namespace>:<name> app id', async () => {
    const { access, seen } = await connect((r) =>
      r.method === 'POST' ? { status: 201, body: r.body } : undefined,
    );
    const scheduler = new KubernetesScheduler(
      { sessionName: 'torchx' },
      { access, uniqueNamer: (n) => `${n}-${SUFFIX}` },
    );
    const info = scheduler.submitDryrun(appOf({ title: 'utils.echo' }), { queue: 'q', namespace: 'ml' });
    expect(scheduler.appIdOf(info)).toBe(`ml:echo-${SUFFIX}`);
    await expect(scheduler.schedule(info)).resolves.toBe(`ml:echo-${SUFFIX}`);
    expect(seen[0]).toMatchObject({ method: 'POST', path: JOBS, body: info.request.resource });
    expect(scheduler.capabilities()).toMatchObject({ cancel: true, logs: true });
  });

  it('reports a name already taken as a conflict that says to submit again', async () => {
    const { access } = await connect(() =>
      kubeStatus(409, 'AlreadyExists', 'jobs.batch.volcano.sh "x" already exists'),
    );
    const scheduler = new KubernetesScheduler({ sessionName: 'torchx' }, { access });
    const info = scheduler.submitDryrun(appOf({ title: 'utils.echo' }), { queue: 'q', namespace: 'ml' });
    await expect(scheduler.schedule(info)).rejects.toMatchObject({
      code: 'BackendConflict',
      message: /already exists; submit again/,
    });
  });

  it('describes the job phase and one replica per task, as TorchX; undefined for a job that is gone', async () => {
    const { access } = await connect((r) =>
      r.path === `${JOBS}/echo-x`
        ? { status: 200, body: { kind: 'Job', metadata: { name: 'echo-x' }, status: running } }
        : undefined,
    );
    const scheduler = new KubernetesScheduler({ sessionName: 'torchx' }, { access });
    const desc = await scheduler.describe('ml:echo-x');
    expect(desc).toMatchObject({ appId: 'ml:echo-x', state: 'RUNNING', numRestarts: 1 });
    expect(desc?.rolesStatuses).toEqual([
      {
        role: 'echo',
        replicas: [
          { id: 0, role: 'echo', state: 'RUNNING', hostname: '', structuredErrorMsg: '<NONE>' },
          { id: 1, role: 'echo', state: 'SUCCEEDED', hostname: '', structuredErrorMsg: '<NONE>' },
        ],
      },
    ]);
    await expect(scheduler.describe('ml:gone')).resolves.toBeUndefined();
    await expect(scheduler.describe('no-namespace')).rejects.toThrow(/<namespace>:<name>/);
  });

  it('lists only the jobs TorchX made in the configured namespace, with their states', async () => {
    const torchxTask = {
      template: { metadata: { labels: { 'app.kubernetes.io/managed-by': 'torchx.pytorch.org' } } },
    };
    const { access } = await connect(() => ({
      status: 200,
      body: {
        kind: 'JobList',
        metadata: {},
        items: [
          {
            metadata: { name: 'a' },
            spec: { tasks: [torchxTask] },
            status: { state: { phase: 'Completed' } },
          },
          {
            metadata: { name: 'b' },
            spec: { tasks: [{ template: { metadata: {} } }] },
            status: { state: { phase: 'Running' } },
          },
        ],
      },
    }));
    const scheduler = new KubernetesScheduler({ sessionName: 'torchx' }, { access });
    await expect(scheduler.list()).resolves.toEqual([
      { appId: 'ml:a', state: 'SUCCEEDED', appHandle: '<NOT_SET>', name: 'a' },
    ]);
  });

  it('cancels a running job by deleting it, and does nothing for a finished one', async () => {
    const { access, seen } = await connect((r) => {
      if (r.method === 'GET') {
        const phase = r.path.endsWith('/done') ? 'Completed' : 'Running';
        return { status: 200, body: { metadata: {}, status: { state: { phase } } } };
      }
      return { status: 200, body: { kind: 'Status', status: 'Success' } };
    });
    const scheduler = new KubernetesScheduler({ sessionName: 'torchx' }, { access });
    await scheduler.cancel('ml:live');
    await scheduler.cancel('ml:done');
    expect(seen.filter((s) => s.method === 'DELETE').map((s) => s.path)).toEqual([`${JOBS}/live`]);
  });

  it("reads a replica's log from the pod Volcano names <job>-<role>-<replica>-0", async () => {
    const { access, seen } = await connect((r) =>
      r.path === '/api/v1/namespaces/ml/pods/echo-x-echo-1-0/log'
        ? { status: 200, body: 'a\nb\n' }
        : undefined,
    );
    const scheduler = new KubernetesScheduler({ sessionName: 'torchx' }, { access });
    await expect(scheduler.readLogs('ml:echo-x', { role: 'echo', replica: 1 })).resolves.toEqual({
      lines: ['a', 'b'],
      caughtUp: true,
    });
    await expect(
      scheduler.readLogs('ml:echo-x', { role: 'echo', replica: 1, filter: compileLogFilter('b') }),
    ).resolves.toMatchObject({
      lines: ['b'],
    });
    await expect(scheduler.readLogs('ml:echo-x', { role: 'echo', streams: 'stderr' })).rejects.toThrow(
      /combined/,
    );
    expect(seen).toHaveLength(2);
  });
});

describe('KubernetesMcadScheduler with a cluster', () => {
  const namer = (name: string, length: number) => `${name}-${LEN_ALPHABET.slice(0, length)}`;

  it('creates the AppWrapper and describes it from MCAD’s task counters, as TorchX', async () => {
    let stored: Record<string, unknown> | undefined;
    const { access, seen } = await connect((r) => {
      if (r.method === 'POST') {
        stored = r.body as Record<string, unknown>;
        return { status: 201, body: stored };
      }
      if (r.method === 'GET' && stored)
        return { status: 200, body: { ...stored, status: { state: 'Running', running: 1, pending: 1 } } };
      return undefined;
    });
    const scheduler = new KubernetesMcadScheduler({ sessionName: 'torchx' }, { access, uniqueNamer: namer });
    const app = appOf({ title: 'utils.sh' });
    const info = scheduler.submitDryrun(app, { namespace: 'ml' });
    const appId = await scheduler.schedule(info);
    expect(appId).toBe(`ml:sh-${LEN_ALPHABET.slice(0, 14)}`);
    expect(seen[0]).toMatchObject({ method: 'POST', path: WRAPPERS });
    const desc = await scheduler.describe(appId);
    expect(desc?.state).toBe('RUNNING');
    expect(desc?.rolesStatuses[0]?.replicas.map((r) => r.state)).toEqual(['RUNNING', 'PENDING']);
    expect(desc?.roles[0]).toMatchObject({
      name: 'sh',
      numReplicas: 2,
      image: 'ghcr.io/pytorch/torchx:0.8.0dev0',
    });
  });

  it("reads replica k's log from pod <app id>-<k>", async () => {
    const { access, seen } = await connect(() => ({ status: 200, body: 'x\n' }));
    const scheduler = new KubernetesMcadScheduler({ sessionName: 'torchx' }, { access });
    await scheduler.readLogs('ml:sh-abc', { role: 'sh', replica: 1 });
    expect(seen[0]?.path).toBe('/api/v1/namespaces/ml/pods/sh-abc-1/log');
  });
});
