import { describe, expect, it } from 'vitest';
import { create as createKubernetes } from '../../../functions/schedulers/kubernetes.js';
import { create as createKubernetesMcad } from '../../../functions/schedulers/kubernetes-mcad.js';
import type { SchedulerDeps } from '../../../functions/schedulers/scheduler-module.js';
import { readFunctionConfig } from '../../../functions/shared/config.js';
import { readDeploymentConfig } from '../../../functions/shared/deployment-config.js';
import { KubernetesScheduler } from '../../../lib/schedulers/kubernetes/index.js';
import { KubernetesMcadScheduler } from '../../../lib/schedulers/kubernetes-mcad/index.js';
import { DEFAULT_WORKSPACE_FETCH_IMAGE } from '../../../lib/schedulers/workspace.js';
import {
  type AppDef,
  type JobWorkspace,
  makeAppDef,
  makeResource,
  makeRole,
  ValidationError,
} from '../../../lib/specs/index.js';

const SHA = 'ab'.repeat(32);
const ARCHIVE = `s3://ws-bucket/workspaces/alice/${SHA}.tar.gz`;
const workspace: JobWorkspace = { sha256: SHA, size: 1234, fileCount: 3, archive: ARCHIVE };
const mountedArchive = `/txs-workspace/${SHA}.tar.gz`;

function trainApp(gpu = 0): AppDef {
  return makeAppDef({
    name: 'train',
    roles: [
      makeRole({
        name: 'trainer',
        image: 'ghcr.io/me/torch:2',
        entrypoint: 'python',
        args: ['train.py', '--lr', '0.1', '--run', '${app_id}'],
        resource: makeResource({ cpu: 2, gpu, memMB: 4096 }),
      }),
    ],
  });
}

const kubernetes = (fetchImage?: string) =>
  new KubernetesScheduler(
    { sessionName: 'torchx' },
    { uniqueNamer: (name) => `${name}-k3x9`, ...(fetchImage ? { workspaceFetchImage: fetchImage } : {}) },
  );
const mcad = (fetchImage?: string) =>
  new KubernetesMcadScheduler(
    { sessionName: 'torchx' },
    {
      uniqueNamer: (name) => `${name}-k3x9`,
      ...(fetchImage ? { workspaceFetchImage: fetchImage } : {}),
    },
  );

type PodSpec = Record<string, unknown> & {
  containers: Record<string, unknown>[];
  volumes: Record<string, unknown>[];
};

function volcanoPodSpecs(resource: unknown): PodSpec[] {
  return (resource as { spec: { tasks: { template: { spec: PodSpec } }[] } }).spec.tasks.map(
    (t) => t.template.spec,
  );
}

function mcadPodSpecs(resource: unknown): PodSpec[] {
  const items = (resource as { spec: { resources: { GenericItems: { generictemplate: unknown }[] } } }).spec
    .resources.GenericItems;
  return items
    .map((item) => item.generictemplate as { kind: string; spec: PodSpec })
    .filter((t) => t.kind === 'Pod')
    .map((t) => t.spec);
}

const schedulers = [
  {
    name: 'kubernetes',
    make: kubernetes,
    cfg: { queue: 'default' },
    pods: volcanoPodSpecs,
    appId: 'train-k3x9',
  },
  {
    name: 'kubernetes_mcad',
    make: mcad,
    cfg: {},
    pods: mcadPodSpecs,
    appId: 'train-k3x9',
  },
] as const;

for (const s of schedulers) {
  describe(`${s.name} with a workspace`, () => {
    it('copies the archive in an init container into an emptyDir, then starts the role unpacked in it', () => {
      const request = s.make().submitDryrun(trainApp(), s.cfg, workspace).request;
      const [pod] = s.pods(request.resource);
      expect(pod?.initContainers).toEqual([
        {
          name: 'workspace-fetch',
          image: DEFAULT_WORKSPACE_FETCH_IMAGE,
          command: ['aws', 's3', 'cp', '--only-show-errors', ARCHIVE, mountedArchive],
          resources: {
            limits: { cpu: '2000m', memory: '4096M' },
            requests: { cpu: '1900m', memory: '3072M' },
          },
          volumeMounts: [{ name: 'txs-workspace', mountPath: '/txs-workspace' }],
        },
      ]);
      expect(pod?.volumes.at(-1)).toEqual({ name: 'txs-workspace', emptyDir: {} });
      const container = pod?.containers[0] as { command: string[]; volumeMounts: unknown[]; image: string };
      expect(container.image).toBe('ghcr.io/me/torch:2');
      expect(container.command).toEqual([
        'sh',
        '-c',
        'tar -xzf "$0" && exec "$@"',
        mountedArchive,
        'python',
        'train.py',
        '--lr',
        '0.1',
        '--run',
        s.appId,
      ]);
      expect(container.volumeMounts.at(-1)).toEqual({
        name: 'txs-workspace',
        mountPath: '/txs-workspace',
        readOnly: true,
      });
      expect(container).not.toHaveProperty('workingDir');
    });

    it('gives the init container no GPU: it asks only for the role’s CPU and memory', () => {
      const request = s.make().submitDryrun(trainApp(1), s.cfg, workspace).request;
      const init = s.pods(request.resource)[0]?.initContainers as { resources: unknown }[];
      expect(init[0]?.resources).toEqual({
        limits: { cpu: '2000m', memory: '4096M' },
        requests: { cpu: '1900m', memory: '3072M' },
      });
      const main = s.pods(request.resource)[0]?.containers[0] as { resources: { limits: object } };
      expect(main.resources.limits).toHaveProperty(['nvidia.com/gpu'], '1');
    });

    it('runs every replica in the workspace', () => {
      const app = trainApp();
      (app.roles[0] as { numReplicas: number }).numReplicas = 2;
      const pods = s.pods(s.make().submitDryrun(app, s.cfg, workspace).request.resource);
      expect(pods).toHaveLength(2);
      for (const pod of pods) {
        expect((pod.initContainers as unknown[]).length).toBe(1);
        expect((pod.containers[0] as { command: string[] }).command.slice(0, 4)).toEqual([
          'sh',
          '-c',
          'tar -xzf "$0" && exec "$@"',
          mountedArchive,
        ]);
      }
    });

    it('uses the fetch image the deployment names', () => {
      const request = s
        .make('registry.example.com/aws-cli:2')
        .submitDryrun(trainApp(), s.cfg, workspace).request;
      const init = s.pods(request.resource)[0]?.initContainers as { image: string }[];
      expect(init[0]?.image).toBe('registry.example.com/aws-cli:2');
    });

    it('leaves the manifest as it is without a workspace', () => {
      const request = s.make().submitDryrun(trainApp(), s.cfg).request;
      const [pod] = s.pods(request.resource);
      expect(pod).not.toHaveProperty('initContainers');
      expect(JSON.stringify(request.resource)).not.toContain('txs-workspace');
      expect(pod?.containers[0]?.command).toEqual(['python', 'train.py', '--lr', '0.1', '--run', s.appId]);
    });

    it.each([
      ['a path on the local server', `/home/alice/.local/share/txs/workspaces/archives/${SHA}.tar.gz`],
      ['an S3 bucket without a key', 's3://ws-bucket/'],
      ['an https URL', `https://ws-bucket.s3.amazonaws.com/${SHA}.tar.gz`],
    ])('refuses an archive that is %s, naming workspace, before translating', (_, archive) => {
      const scheduler = s.make();
      const refusal = (() => {
        try {
          scheduler.submitDryrun(trainApp(), s.cfg, { ...workspace, archive });
        } catch (error) {
          return error;
        }
        return undefined;
      })();
      expect(refusal).toBeInstanceOf(ValidationError);
      expect((refusal as ValidationError).message).toMatch(/workspace/);
      expect((refusal as ValidationError).message).toContain(archive);
      expect((refusal as ValidationError).message).toContain('--workspace ""');
    });
  });
}

describe('the Volcano pod of a replica with a workspace', () => {
  it('is the role’s pod plus the fetch init container, the emptyDir, its read-only mount and the wrapped command', () => {
    const app = makeAppDef({
      name: 'train',
      roles: [
        makeRole({
          name: 'trainer',
          image: 'ghcr.io/me/torch:2',
          entrypoint: 'python',
          args: ['train.py'],
          resource: makeResource({ cpu: 2, gpu: 0, memMB: 4096 }),
        }),
      ],
    });
    const resources = {
      limits: { cpu: '2000m', memory: '4096M' },
      requests: { cpu: '1900m', memory: '3072M' },
    };
    const [pod] = volcanoPodSpecs(
      kubernetes().submitDryrun(app, { queue: 'default' }, workspace).request.resource,
    );
    expect(pod).toEqual({
      initContainers: [
        {
          name: 'workspace-fetch',
          image: 'public.ecr.aws/aws-cli/aws-cli:2.31.23',
          command: ['aws', 's3', 'cp', '--only-show-errors', ARCHIVE, mountedArchive],
          resources,
          volumeMounts: [{ name: 'txs-workspace', mountPath: '/txs-workspace' }],
        },
      ],
      containers: [
        {
          command: ['sh', '-c', 'tar -xzf "$0" && exec "$@"', mountedArchive, 'python', 'train.py'],
          image: 'ghcr.io/me/torch:2',
          name: 'trainer-0',
          env: [{ name: 'TORCHX_RANK0_HOST', value: 'localhost' }],
          resources,
          ports: [],
          volumeMounts: [
            { name: 'dshm', mountPath: '/dev/shm' },
            { name: 'txs-workspace', mountPath: '/txs-workspace', readOnly: true },
          ],
          securityContext: {},
        },
      ],
      restartPolicy: 'Never',
      volumes: [
        { name: 'dshm', emptyDir: { medium: 'Memory' } },
        { name: 'txs-workspace', emptyDir: {} },
      ],
      nodeSelector: {},
    });
    expect(Object.keys(pod ?? {})[0]).toBe('initContainers');
  });
});

describe("the Kubernetes schedulers' modules", () => {
  it("give both schedulers the deployment's fetch image (TXS_WORKSPACE_FETCH_IMAGE)", async () => {
    const image = '123456789012.dkr.ecr.us-east-1.amazonaws.com/aws-cli:2.31.23';
    const config = readFunctionConfig({ TXS_TABLE_NAME: 'apps' });
    const deps = { config, deployment: readDeploymentConfig({ TXS_WORKSPACE_FETCH_IMAGE: image }) };
    const volcano = createKubernetes(deps as SchedulerDeps)({ sessionName: 'torchx' });
    const appWrapper = createKubernetesMcad(deps as SchedulerDeps)({ sessionName: 'torchx' });
    const [volcanoPod] = volcanoPodSpecs(
      (volcano.submitDryrun(trainApp(), { queue: 'default' }, workspace).request as { resource: unknown })
        .resource,
    );
    const [mcadPod] = mcadPodSpecs(
      (appWrapper.submitDryrun(trainApp(), {}, workspace).request as { resource: unknown }).resource,
    );
    for (const pod of [volcanoPod, mcadPod]) {
      expect((pod?.initContainers as { image: string }[] | undefined)?.[0]?.image).toBe(image);
    }
  });
});
