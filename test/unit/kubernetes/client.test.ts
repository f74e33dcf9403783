/**
 * KubeApiClient at the HTTP wire, against a fake API server (no Kubernetes API server can run here). Response
 * bodies follow the Kubernetes API reference: meta/v1 `Status` for failures, the stored object for
 * create/get, `<Kind>List` with `metadata.continue` for paged lists, plain text for pod logs.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { KubeApiClient } from '../../../lib/schedulers/kubernetes/client.js';
import { type FakeRoute, kubeStatus, type SeenRequest, startFakeKubeApi } from './fake-api-server.js';

const JOBS = { group: 'batch.volcano.sh', version: 'v1alpha1', plural: 'jobs' };
const JOB_PATH = '/apis/batch.volcano.sh/v1alpha1/namespaces/ml/jobs';

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

async function fake(route: FakeRoute, token: string | (() => Promise<string>) = 'secret-token') {
  const server = await startFakeKubeApi(route);
  close = server.close;
  return { client: new KubeApiClient({ server: server.url, token }), seen: server.seen };
}

describe('KubeApiClient', () => {
  it('creates a custom object with POST to its namespaced collection, with the bearer token and JSON body', async () => {
    const { client, seen } = await fake((r) =>
      r.method === 'POST' && r.path === JOB_PATH
        ? {
            status: 201,
            body: { ...(r.body as object), metadata: { name: 'echo-x', namespace: 'ml', uid: 'u1' } },
          }
        : undefined,
    );
    const stored = await client.create(JOBS, 'ml', { apiVersion: 'batch.volcano.sh/v1alpha1', kind: 'Job' });
    expect(stored).toMatchObject({ kind: 'Job', metadata: { uid: 'u1' } });
    const [req] = seen as [SeenRequest];
    expect(req.headers.authorization).toBe('Bearer secret-token');
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.body).toEqual({ apiVersion: 'batch.volcano.sh/v1alpha1', kind: 'Job' });
  });

  it('asks the token provider for a fresh token on every request (EKS tokens live 60 s)', async () => {
    let n = 0;
    const { client, seen } = await fake(
      () => ({ status: 200, body: { kind: 'Job' } }),
      async () => `t${++n}`,
    );
    await client.get(JOBS, 'ml', 'a');
    await client.get(JOBS, 'ml', 'b');
    expect(seen.map((s) => s.headers.authorization)).toEqual(['Bearer t1', 'Bearer t2']);
  });

  it('maps AlreadyExists (409) to a conflict, Invalid (422) to a validation error, Forbidden (403) to access denied', async () => {
    const answers: Record<string, ReturnType<typeof kubeStatus>> = {
      a: kubeStatus(409, 'AlreadyExists', 'jobs.batch.volcano.sh "a" already exists', {
        name: 'a',
        kind: 'jobs',
      }),
      b: kubeStatus(422, 'Invalid', 'Job.batch.volcano.sh "b" is invalid: spec.tasks: Required value'),
      c: kubeStatus(
        403,
        'Forbidden',
        'jobs.batch.volcano.sh is forbidden: User "x" cannot create resource "jobs"',
      ),
      d: kubeStatus(401, 'Unauthorized', 'Unauthorized'),
      e: kubeStatus(500, 'InternalError', 'etcdserver: request timed out'),
    };
    const { client } = await fake((r) => answers[(r.body as { metadata: { name: string } }).metadata.name]);
    const job = (name: string) => ({ metadata: { name } });
    await expect(client.create(JOBS, 'ml', job('a'))).rejects.toMatchObject({ code: 'BackendConflict' });
    await expect(client.create(JOBS, 'ml', job('b'))).rejects.toMatchObject({
      code: 'BackendValidation',
      message: expect.stringContaining('spec.tasks: Required value'),
    });
    await expect(client.create(JOBS, 'ml', job('c'))).rejects.toMatchObject({ code: 'BackendAccessDenied' });
    await expect(client.create(JOBS, 'ml', job('d'))).rejects.toMatchObject({
      code: 'BackendAccessDenied',
      message: expect.stringContaining('credentials were not accepted'),
    });
    await expect(client.create(JOBS, 'ml', job('e'))).rejects.toMatchObject({
      code: 'BackendError',
      retryable: true,
    });
  });

  it('says to install the operator when the custom resource type is not served (404 on create)', async () => {
    const { client } = await fake(() => undefined);
    await expect(client.create(JOBS, 'ml', {})).rejects.toThrow(
      /does not serve jobs\.batch\.volcano\.sh.*install/,
    );
  });

  it('gets an object, and undefined for a 404 NotFound', async () => {
    const { client } = await fake((r) =>
      r.path === `${JOB_PATH}/there`
        ? { status: 200, body: { kind: 'Job', status: { state: { phase: 'Running' } } } }
        : undefined,
    );
    await expect(client.get(JOBS, 'ml', 'there')).resolves.toMatchObject({
      status: { state: { phase: 'Running' } },
    });
    await expect(client.get(JOBS, 'ml', 'gone')).resolves.toBeUndefined();
  });

  it('lists by label selector across pages (metadata.continue)', async () => {
    const { client, seen } = await fake((r) =>
      r.query.continue === 'tok2'
        ? {
            status: 200,
            body: {
              kind: 'JobList',
              apiVersion: 'batch.volcano.sh/v1alpha1',
              metadata: {},
              items: [{ n: 2 }],
            },
          }
        : { status: 200, body: { kind: 'JobList', metadata: { continue: 'tok2' }, items: [{ n: 1 }] } },
    );
    const items = await client.list(JOBS, 'ml', 'app.kubernetes.io/managed-by=torchx.pytorch.org');
    expect(items).toEqual([{ n: 1 }, { n: 2 }]);
    expect(seen[0]?.query).toEqual({
      labelSelector: 'app.kubernetes.io/managed-by=torchx.pytorch.org',
      limit: '500',
    });
    expect(seen[1]?.query.continue).toBe('tok2');
  });

  it('deletes with background propagation; false for an object that is already gone', async () => {
    const { client, seen } = await fake((r) =>
      r.method === 'DELETE' && r.path.endsWith('/x')
        ? {
            status: 200,
            body: {
              kind: 'Status',
              apiVersion: 'v1',
              metadata: {},
              status: 'Success',
              details: { name: 'x' },
            },
          }
        : undefined,
    );
    await expect(client.delete(JOBS, 'ml', 'x')).resolves.toBe(true);
    await expect(client.delete(JOBS, 'ml', 'y')).resolves.toBe(false);
    expect(seen[0]?.query.propagationPolicy).toBe('Background');
  });

  it('reads a pod log as text with timestamps and sinceSeconds; undefined for an unknown pod', async () => {
    const { client, seen } = await fake((r) =>
      r.path === '/api/v1/namespaces/ml/pods/echo-x-echo-0-0/log'
        ? { status: 200, body: '2026-11-23T21:30:00.000000000Z hello\n' }
        : undefined,
    );
    await expect(
      client.podLog('ml', 'echo-x-echo-0-0', { timestamps: true, sinceSeconds: 2.5 }),
    ).resolves.toBe('2026-11-23T21:30:00.000000000Z hello\n');
    expect(seen[0]?.query).toEqual({ timestamps: 'true', sinceSeconds: '3' });
    await expect(client.podLog('ml', 'nope')).resolves.toBeUndefined();
  });

  it('refuses names that could leave their path (.., /, upper case) before sending anything', async () => {
    const { client, seen } = await fake(() => ({ status: 200, body: {} }));
    await expect(client.get(JOBS, 'ml', '..')).rejects.toMatchObject({ code: 'ValidationFailed' });
    await expect(client.get(JOBS, '../kube-system', 'x')).rejects.toThrow(/namespace/);
    await expect(client.podLog('ml', 'a/../../secrets')).rejects.toThrow(/pod/);
    await expect(client.delete(JOBS, 'ml', 'Echo')).rejects.toThrow(/not a Kubernetes name/);
    expect(seen).toEqual([]);
  });

  it('reports an unreachable server as a retryable backend error', async () => {
    const client = new KubeApiClient({ server: 'http://127.0.0.1:1' });
    await expect(client.get(JOBS, 'ml', 'x')).rejects.toMatchObject({
      code: 'BackendError',
      retryable: true,
    });
  });
});
