/**
 * The slurm and Kubernetes schedulers are configured by the function's validated configuration (given to
 * their modules in SchedulerDeps), never by reading the environment themselves; a bad setting stops the
 * function at configuration time, naming the variable.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { create as createKubernetes, kubeAccess } from '../../../functions/schedulers/kubernetes.js';
import { create as createKubernetesMcad } from '../../../functions/schedulers/kubernetes-mcad.js';
import { dockerSocketFromEnv } from '../../../functions/schedulers/local-docker.js';
import type { SchedulerDeps } from '../../../functions/schedulers/scheduler-module.js';
import { create as createSlurm } from '../../../functions/schedulers/slurm.js';
import { ConfigError, type FunctionConfig, readFunctionConfig } from '../../../functions/shared/config.js';
import { readDeploymentConfig } from '../../../functions/shared/deployment-config.js';
import { ENV } from '../../../functions/shared/env-names.js';
import { materializeComponent } from '../../../lib/components/index.js';

const dir = mkdtempSync(join(tmpdir(), 'txs-scheduler-settings-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => {
  vi.unstubAllGlobals();
  vi.unstubAllEnvs();
});

const BASE = { [ENV.tableName]: 'apps' };
const ctx = { sessionName: 'torchx' };

/** The dependencies a scheduler module gets, with `config` and a deployment of no settings (nothing else is used). */
function deps(config: FunctionConfig): SchedulerDeps {
  return { config, deployment: readDeploymentConfig({}) } as SchedulerDeps;
}

/** Clears every scheduler variable from this process's environment, so only the config object can tell. */
function clearSchedulerEnvironment(): void {
  for (const name of Object.values(ENV)) vi.stubEnv(name, '');
}

function configError(env: Record<string, string>): string {
  try {
    readFunctionConfig({ ...BASE, ...env });
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('the configuration was accepted');
}

function kubeconfigFile(server: string, namespace: string): string {
  const path = join(dir, `kubeconfig-${namespace}.json`);
  writeFileSync(
    path,
    JSON.stringify({
      'current-context': 'c',
      contexts: [{ name: 'c', context: { cluster: 'k', user: 'u', namespace } }],
      clusters: [{ name: 'k', cluster: { server } }],
      users: [{ name: 'u', user: { token: 't' } }],
    }),
  );
  return path;
}

describe('slurm settings', () => {
  it('reach the slurm scheduler from the config object, not the environment', async () => {
    clearSchedulerEnvironment();
    const config = readFunctionConfig({
      ...BASE,
      [ENV.schedulers]: 'slurm',
      [ENV.slurmUrl]: 'http://slurm.test:6820',
      [ENV.slurmUser]: 'alice',
      [ENV.slurmToken]: 'token-1',
      [ENV.slurmWorkDir]: '/scratch',
      [ENV.slurmGpusPerNode]: 'true',
    });
    const requests: { url: string; headers: Record<string, string> }[] = [];
    vi.stubGlobal('fetch', async (url: string, init: RequestInit) => {
      requests.push({ url, headers: init.headers as Record<string, string> });
      return new Response(JSON.stringify({ jobs: [], errors: [] }), { status: 200 });
    });
    const scheduler = (await createSlurm(deps(config)))(ctx);

    const app = materializeComponent('dist.ddp', ['-j', '1x1', '--gpu', '1', '--script', 'train.py']);
    const request = scheduler.submitDryrun(app).request as { script: string; slurmrestd: { body: unknown } };
    expect(request.script).toContain('--gpus-per-node=1');
    expect(JSON.stringify(request.slurmrestd.body)).toContain('"current_working_directory":"/scratch"');
    expect(await scheduler.list()).toEqual([]);
    expect(requests.map((r) => [r.url, r.headers['X-SLURM-USER-NAME']])).toEqual([
      ['http://slurm.test:6820/slurm/v0.0.38/jobs', 'alice'],
    ]);
  });

  it('are refused at configuration time, naming the variable, when a value is bad or one is missing', () => {
    expect(configError({ [ENV.slurmGpusPerNode]: 'yes' })).toContain(`${ENV.slurmGpusPerNode}='yes'`);
    expect(
      configError({ [ENV.slurmUrl]: 'head:6820', [ENV.slurmUser]: 'a', [ENV.slurmToken]: 't' }),
    ).toContain(`${ENV.slurmUrl}='head:6820' is not an http(s) URL`);
    const missing = configError({ [ENV.slurmUrl]: 'http://head:6820' });
    expect(missing).toContain(`also set ${ENV.slurmUser}`);
    expect(missing).toContain(`also set ${ENV.slurmToken}`);
    expect(
      configError({ [ENV.slurmUrl]: 'http://h', [ENV.slurmUser]: 'a', [ENV.slurmJwtKey]: 'no!' }),
    ).toContain(`${ENV.slurmJwtKey} is not base64`);
    expect(
      configError({
        [ENV.slurmUrl]: 'http://h',
        [ENV.slurmUser]: 'a',
        [ENV.slurmJwtKeySecretArn]: 'slurm-key',
      }),
    ).toContain(`${ENV.slurmJwtKeySecretArn}='slurm-key' is not a Secrets Manager secret ARN`);
  });
});

describe('Kubernetes settings', () => {
  it('reach both Kubernetes schedulers from the config object: the cluster and the namespace list reads', async () => {
    clearSchedulerEnvironment();
    const paths: string[] = [];
    const server = createServer((req, res) => {
      paths.push(req.url ?? '');
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ items: [] }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const config = readFunctionConfig({
        ...BASE,
        [ENV.kubeconfig]: kubeconfigFile(`http://127.0.0.1:${port}`, 'research'),
        [ENV.kubeNamespace]: 'ml',
      });
      expect(await (await createKubernetes(deps(config)))(ctx).list()).toEqual([]);
      expect(await (await createKubernetesMcad(deps(config)))(ctx).list()).toEqual([]);
      expect(paths).toEqual([
        '/apis/batch.volcano.sh/v1alpha1/namespaces/ml/jobs?limit=500',
        '/apis/workload.codeflare.dev/v1beta1/namespaces/ml/appwrappers?limit=500',
      ]);
    } finally {
      server.close();
    }
  });

  it("use the kubeconfig context's namespace when none is set, and build an EKS client from its settings", () => {
    const fromFile = readFunctionConfig({
      ...BASE,
      [ENV.kubeconfig]: kubeconfigFile('https://10.0.0.1:6443', 'research'),
    });
    expect(kubeAccess(fromFile.kubernetes)?.namespace).toBe('research');
    expect(kubeAccess(readFunctionConfig(BASE).kubernetes)).toBeUndefined();
    const eks = readFunctionConfig({
      ...BASE,
      [ENV.eksCluster]: 'training',
      [ENV.eksEndpoint]: 'https://ABC.gr7.us-west-2.eks.amazonaws.com',
      AWS_REGION: 'us-west-2',
    });
    const access = kubeAccess(eks.kubernetes);
    expect(access?.client.server).toBe('https://abc.gr7.us-west-2.eks.amazonaws.com');
    expect(access?.namespace).toBe('default');
  });

  it('are refused at configuration time, naming the variable, when a value is bad or one is missing', () => {
    const noEndpoint = configError({ [ENV.eksCluster]: 'training' });
    expect(noEndpoint).toContain(`set ${ENV.eksEndpoint}`);
    expect(noEndpoint).toContain('also set AWS_REGION');
    expect(
      configError({ [ENV.eksCluster]: 't', [ENV.eksEndpoint]: 'http://k8s', AWS_REGION: 'us-west-2' }),
    ).toContain(`${ENV.eksEndpoint} to the cluster's https API endpoint (not 'http://k8s')`);
    expect(configError({ [ENV.kubeNamespace]: 'Research' })).toContain(
      `${ENV.kubeNamespace}='Research' is not a namespace`,
    );
  });
});

describe('dockerSocketFromEnv', () => {
  it('finds a unix:// DOCKER_HOST socket that exists, and nothing for TCP hosts or missing sockets', () => {
    const socket = join(dir, 'docker.sock');
    writeFileSync(socket, '');
    expect(dockerSocketFromEnv({ DOCKER_HOST: `unix://${socket}` })).toBe(socket);
    expect(dockerSocketFromEnv({ DOCKER_HOST: 'tcp://127.0.0.1:2375' })).toBeUndefined();
    expect(dockerSocketFromEnv({ DOCKER_HOST: `unix://${join(dir, 'none.sock')}` })).toBeUndefined();
  });
});
