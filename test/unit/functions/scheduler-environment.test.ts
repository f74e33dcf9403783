import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { kubeAccessFromEnv } from '../../../functions/schedulers/kubernetes.js';
import { dockerSocketFromEnv } from '../../../functions/schedulers/local-docker.js';

const dir = mkdtempSync(join(tmpdir(), 'txs-kube-env-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('kubeAccessFromEnv', () => {
  it('leaves the Kubernetes schedulers dry-run only when no cluster is configured', () => {
    expect(kubeAccessFromEnv({})).toBeUndefined();
  });

  it("uses the kubeconfig's current context, its namespace unless TXS_K8S_NAMESPACE overrides it", () => {
    const path = join(dir, 'kubeconfig.json');
    writeFileSync(
      path,
      JSON.stringify({
        'current-context': 'c',
        contexts: [{ name: 'c', context: { cluster: 'k', user: 'u', namespace: 'research' } }],
        clusters: [{ name: 'k', cluster: { server: 'https://10.0.0.1:6443' } }],
        users: [{ name: 'u', user: { token: 't' } }],
      }),
    );
    const access = kubeAccessFromEnv({ TXS_KUBECONFIG: path });
    expect(access?.client.server).toBe('https://10.0.0.1:6443');
    expect(access?.namespace).toBe('research');
    expect(kubeAccessFromEnv({ TXS_KUBECONFIG: path, TXS_K8S_NAMESPACE: 'ml' })?.namespace).toBe('ml');
  });

  it('builds an EKS client from the cluster name, endpoint and region, and names what is missing', () => {
    const access = kubeAccessFromEnv({
      TXS_EKS_CLUSTER: 'training',
      TXS_EKS_ENDPOINT: 'https://ABC.gr7.us-west-2.eks.amazonaws.com',
      AWS_REGION: 'us-west-2',
    });
    expect(access?.client.server).toBe('https://abc.gr7.us-west-2.eks.amazonaws.com');
    expect(access?.namespace).toBe('default');
    expect(() => kubeAccessFromEnv({ TXS_EKS_CLUSTER: 'training', AWS_REGION: 'us-west-2' })).toThrow(
      /TXS_EKS_ENDPOINT/,
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
