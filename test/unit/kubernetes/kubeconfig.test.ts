import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EKS_TOKEN_PREFIX } from '../../../lib/schedulers/kubernetes/eks-token.js';
import { kubeConfigContext, loadKubeConfig } from '../../../lib/schedulers/kubernetes/kubeconfig.js';

const dir = mkdtempSync(join(tmpdir(), 'txs-kubeconfig-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const b64 = (s: string) => Buffer.from(s).toString('base64');
const creds = async () => ({ accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' });

function config(user: object, extra: { namespace?: string; cluster?: object } = {}) {
  return {
    'current-context': 'ctx',
    contexts: [
      { name: 'other', context: { cluster: 'x', user: 'x' } },
      {
        name: 'ctx',
        context: { cluster: 'c', user: 'u', ...(extra.namespace ? { namespace: extra.namespace } : {}) },
      },
    ],
    clusters: [
      {
        name: 'c',
        cluster: {
          server: 'https://k8s.example:6443',
          'certificate-authority-data': b64('CA-PEM'),
          ...extra.cluster,
        },
      },
    ],
    users: [{ name: 'u', user }],
  };
}

describe('kubeConfigContext', () => {
  it("reads the current context's server, CA, namespace and bearer token", () => {
    const ctx = kubeConfigContext(config({ token: 'abc' }, { namespace: 'ml' }), dir);
    expect(ctx).toEqual({
      connection: { server: 'https://k8s.example:6443', ca: 'CA-PEM', token: 'abc' },
      namespace: 'ml',
      context: 'ctx',
    });
  });

  it('reads client certificates inline or from files relative to the kubeconfig, and defaults the namespace', () => {
    writeFileSync(join(dir, 'client.crt'), 'CERT-PEM');
    const ctx = kubeConfigContext(
      config({ 'client-certificate': 'client.crt', 'client-key-data': b64('KEY-PEM') }),
      dir,
    );
    expect(ctx.connection).toMatchObject({ clientCert: 'CERT-PEM', clientKey: 'KEY-PEM' });
    expect(ctx.namespace).toBe('default');
  });

  it('re-reads a token file for every request (projected service-account tokens rotate)', async () => {
    const path = join(dir, 'token');
    writeFileSync(path, 'one\n');
    const token = kubeConfigContext(config({ tokenFile: path }), dir).connection
      .token as () => Promise<string>;
    await expect(token()).resolves.toBe('one');
    writeFileSync(path, 'two\n');
    await expect(token()).resolves.toBe('two');
  });

  it('makes EKS tokens for an `aws eks get-token` exec user, with its cluster and region', async () => {
    // as `aws eks update-kubeconfig` writes it: global options first
    const exec = {
      command: '/usr/local/bin/aws',
      args: ['--region', 'us-west-2', 'eks', 'get-token', '--cluster-name', 'training', '--output', 'json'],
    };
    const good = kubeConfigContext(config({ exec }), dir, { awsCredentials: creds });
    const token = await (good.connection.token as () => Promise<string>)();
    expect(token.startsWith(EKS_TOKEN_PREFIX)).toBe(true);
    const url = new URL(Buffer.from(token.slice(EKS_TOKEN_PREFIX.length), 'base64url').toString('utf8'));
    expect(url.hostname).toBe('sts.us-west-2.amazonaws.com');
    expect(url.searchParams.get('X-Amz-Credential')).toContain('/us-west-2/sts/aws4_request');
  });

  it('refuses other exec plugins, naming the field', () => {
    expect(() => kubeConfigContext(config({ exec: { command: 'gke-gcloud-auth-plugin' } }), dir)).toThrow(
      /kubeconfig\.users\.exec.*gke-gcloud-auth-plugin/,
    );
  });

  it('names what is missing: current context, context, cluster', () => {
    expect(() => kubeConfigContext({}, dir)).toThrow(/current-context/);
    expect(() => kubeConfigContext({ ...config({}), 'current-context': 'nope' }, dir)).toThrow(
      /no context named nope/,
    );
    expect(() => kubeConfigContext({ ...config({}), clusters: [] }, dir)).toThrow(/kubeconfig\.clusters/);
  });
});

describe('loadKubeConfig', () => {
  it('reads a YAML kubeconfig as kubectl writes it, exec users included', async () => {
    const path = join(dir, 'config');
    writeFileSync(
      path,
      [
        'apiVersion: v1',
        'kind: Config',
        'preferences: {}',
        'current-context: arn:aws:eks:us-west-2:111122223333:cluster/training',
        'clusters:',
        '- cluster:',
        `    certificate-authority-data: ${b64('CA-PEM')}`,
        '    server: https://ABC.gr7.us-west-2.eks.amazonaws.com',
        '  name: arn:aws:eks:us-west-2:111122223333:cluster/training',
        'contexts:',
        '- context:',
        '    cluster: arn:aws:eks:us-west-2:111122223333:cluster/training',
        '    user: arn:aws:eks:us-west-2:111122223333:cluster/training',
        '    namespace: ml',
        '  name: arn:aws:eks:us-west-2:111122223333:cluster/training',
        'users:',
        '- name: arn:aws:eks:us-west-2:111122223333:cluster/training',
        '  user:',
        '    exec:',
        '      apiVersion: client.authentication.k8s.io/v1beta1',
        '      command: aws',
        '      args:',
        '      - --region',
        '      - us-west-2',
        '      - eks',
        '      - get-token',
        '      - --cluster-name',
        '      - training',
        '      env: null',
        '',
      ].join('\n'),
    );
    const ctx = loadKubeConfig(path, { awsCredentials: creds });
    expect(ctx.connection.server).toBe('https://ABC.gr7.us-west-2.eks.amazonaws.com');
    expect(ctx.connection.ca).toBe('CA-PEM');
    expect(ctx.namespace).toBe('ml');
    const token = ctx.connection.token;
    expect(typeof token).toBe('function');
    expect(await (token as () => Promise<string>)()).toMatch(new RegExp(`^${EKS_TOKEN_PREFIX}`));
  });

  it('reads a JSON kubeconfig file', () => {
    const json = join(dir, 'config.json');
    writeFileSync(json, JSON.stringify(config({ token: 't' })));
    expect(loadKubeConfig(json).connection.server).toBe('https://k8s.example:6443');
  });

  it('names the file and the first error when it is not YAML', () => {
    const broken = join(dir, 'broken');
    writeFileSync(broken, 'current-context: ctx\nclusters: [\n');
    expect(() => loadKubeConfig(broken)).toThrow(/kubeconfig.*broken is not a YAML kubeconfig: /);
  });
});
