import type { NodeRangeProperty, ResourceRequirement } from '@aws-sdk/client-batch';
import { describe, expect, it } from 'vitest';
import {
  type AwsBatchOpts,
  awsBatchRunOpts,
  definitionHash,
  isSharedDefinition,
  parseNumReplicas,
  resourceFromRequirements,
  resourceRequirementsOf,
  roleToNodeRangeProperty,
  translateApp,
} from '../../../lib/schedulers/aws-batch/index.js';
import { AppNotSupportedError } from '../../../lib/schedulers/errors.js';
import {
  type AppDef,
  cloneAppDef,
  InvalidRunConfigError,
  makeAppDef,
  makeResource,
  makeRole,
  namedResource,
  type Resource,
  ValidationError,
} from '../../../lib/specs/index.js';
import { appFromTorchx, fixture, mockedScheduler, roleFromTorchx, type TorchxRole } from './helpers.js';

interface DryrunFixture {
  appdef: { name: string; roles: TorchxRole[]; metadata: Record<string, string> };
  cfg: { queue: string; user: string };
  request: { name: string; queue: string; job_def: Record<string, unknown> };
  app_id: string;
}

interface HelpersFixture {
  role_to_node_properties: { test: string; role: TorchxRole; node_range_property: NodeRangeProperty }[];
  resource_requirements_from_resource: {
    resource: Resource;
    resourceRequirements?: ResourceRequirement[];
    error?: string;
  }[];
  resource_from_resource_requirements: { resourceRequirements: ResourceRequirement[]; resource: Resource }[];
  parse_num_replicas: { targetNodes: string; numNodes: number; num_replicas: number }[];
}

const dryrunFixture = fixture<DryrunFixture>('fromtest_batch_test_submit_dryrun.json');
const helpersFixture = fixture<HelpersFixture>('fromtest_batch_helpers.json');

function opts(cfg: Record<string, unknown> = {}): AwsBatchOpts {
  return awsBatchRunOpts('alice').resolve({ queue: 'q', ...cfg } as never) as AwsBatchOpts;
}

const fixedNamer = (prefix: string) => `${prefix}-42`;

function echoApp(init: Partial<AppDef> = {}): AppDef {
  return makeAppDef({
    name: 'echo',
    roles: [
      makeRole({
        name: 'echo',
        image: 'alpine:3',
        entrypoint: 'echo',
        args: ['hello'],
        resource: makeResource({ cpu: 1, gpu: 0, memMB: 1024 }),
      }),
    ],
    ...init,
  });
}

function issuesOf(fn: () => unknown): { path: string; message: string }[] {
  try {
    fn();
  } catch (e) {
    if (e instanceof ValidationError) return [...e.issues];
    throw e;
  }
  throw new Error('expected a ValidationError');
}

describe('AwsBatchScheduler translation', () => {
  describe("TorchX's tests", () => {
    it('reproduces test_submit_dryrun byte for byte with the job name fixed to app-name-42', () => {
      const { scheduler } = mockedScheduler({ uniqueNamer: () => 'app-name-42' });
      const info = scheduler.submitDryrun(appFromTorchx(dryrunFixture.appdef), dryrunFixture.cfg);
      expect(JSON.stringify(info.request.registerJobDefinition)).toBe(
        JSON.stringify(dryrunFixture.request.job_def),
      );
      expect(info.request.submitJob).toEqual({
        jobName: 'app-name-42',
        jobQueue: 'testqueue',
        jobDefinition: 'app-name-42',
        tags: dryrunFixture.request.job_def.tags,
      });
      expect(scheduler.appIdOf(info)).toBe(dryrunFixture.app_id);
      expect(scheduler.nativeNameOf(scheduler.appIdOf(info))).toBe('app-name-42');
    });

    it.each(helpersFixture.role_to_node_properties.map((c) => [c.test.split('.').pop(), c] as const))(
      'reproduces %s',
      (_name, c) => {
        expect(roleToNodeRangeProperty(roleFromTorchx(c.role), 0, { privileged: false })).toEqual(
          c.node_range_property,
        );
      },
    );

    it.each(
      helpersFixture.resource_requirements_from_resource
        .filter((c) => c.error === undefined)
        .map((c) => [JSON.stringify(c.resource), c] as const),
    )('reproduces the resource requirements of %s', (_name, c) => {
      expect(resourceRequirementsOf(makeResource(c.resource))).toEqual(c.resourceRequirements);
    });

    it("rejects memMB 0 with TorchX's message, naming the field", () => {
      expect(issuesOf(() => resourceRequirementsOf(makeResource({ cpu: 1, gpu: 0, memMB: 0 })))).toEqual([
        {
          path: 'resource.memMB',
          message: 'AWSBatchScheduler requires memMB to be set to a positive value, got 0',
        },
      ]);
    });

    it.each(helpersFixture.resource_from_resource_requirements.map((c) => [c.resource, c] as const))(
      'reads requirements back into %o',
      (_name, c) => {
        expect(resourceFromRequirements(c.resourceRequirements)).toEqual(makeResource(c.resource));
      },
    );

    it.each(helpersFixture.parse_num_replicas)(
      'counts $num_replicas replicas in targetNodes $targetNodes of $numNodes nodes',
      (c) => {
        expect(parseNumReplicas(c.targetNodes, c.numNodes)).toBe(c.num_replicas);
      },
    );

    it('appends -<share_id> to the job name and sets schedulingPriority 0 and the share identifier', () => {
      const { request } = translateApp(echoApp({ name: 'test' }), opts({ share_id: 'fooshare' }), fixedNamer);
      expect(request.submitJob.jobName).toBe('test-fooshare-42');
      expect(request.submitJob.shareIdentifier).toBe('fooshare');
      expect(request.registerJobDefinition.schedulingPriority).toBe(0);
    });

    it('sets the priority only together with a share id', () => {
      const withShare = translateApp(echoApp(), opts({ share_id: 'foo', priority: 42 }), fixedNamer).request;
      const withoutShare = translateApp(echoApp(), opts({ priority: 42 }), fixedNamer).request;
      expect(withShare.registerJobDefinition.schedulingPriority).toBe(42);
      expect(withoutShare.registerJobDefinition).not.toHaveProperty('schedulingPriority');
      expect(withoutShare.submitJob).not.toHaveProperty('shareIdentifier');
    });

    it('tags the job with the TorchX version, app name and user, then the app metadata', () => {
      const { request } = translateApp(echoApp({ metadata: { team: 'vision' } }), opts(), fixedNamer);
      expect(request.registerJobDefinition.tags).toEqual({
        'torchx.pytorch.org/version': '0.8.0dev0',
        'torchx.pytorch.org/app-name': 'echo',
        'torchx.pytorch.org/user': 'alice',
        team: 'vision',
      });
      expect(request.submitJob.tags).toEqual(request.registerJobDefinition.tags);
    });

    it('sets instanceType from the named resource for one or more replicas, and omits it otherwise', () => {
      const app = echoApp();
      const role = app.roles[0]!;
      role.resource = namedResource('aws_g5.xlarge');
      role.numReplicas = 3;
      const container = translateApp(app, opts(), fixedNamer).request.registerJobDefinition.nodeProperties
        ?.nodeRangeProperties?.[0]?.container;
      expect(container?.instanceType).toBe('g5.xlarge');
      const plain = translateApp(echoApp(), opts(), fixedNamer).request.registerJobDefinition.nodeProperties
        ?.nodeRangeProperties?.[0]?.container;
      expect(plain).not.toHaveProperty('instanceType');
    });

    it('passes the role ARNs when set and privileged always', () => {
      const container = translateApp(
        echoApp(),
        opts({
          privileged: true,
          job_role_arn: 'arn:aws:iam::123456789012:role/job',
          execution_role_arn: 'arn:aws:iam::123456789012:role/exec',
        }),
        fixedNamer,
      ).request.registerJobDefinition.nodeProperties?.nodeRangeProperties?.[0]?.container;
      expect(container).toMatchObject({
        privileged: true,
        jobRoleArn: 'arn:aws:iam::123456789012:role/job',
        executionRoleArn: 'arn:aws:iam::123456789012:role/exec',
      });
    });

    it('registers multi-node ECS definitions only, every node range privileged exactly as cfg.privileged', () => {
      // What makes the host-access check of cfg.privileged cover the request: no containerProperties,
      // ecsProperties or eksProperties form, and no node range of its own privilege.
      const app = echoApp();
      app.roles.push({ ...app.roles[0]!, name: 'second', numReplicas: 2 });
      for (const privileged of [false, true]) {
        const definition = translateApp(app, opts({ privileged }), fixedNamer).request.registerJobDefinition;
        expect(definition.type).toBe('multinode');
        for (const form of ['containerProperties', 'ecsProperties', 'eksProperties'] as const) {
          expect(definition).not.toHaveProperty(form);
        }
        const ranges = definition.nodeProperties?.nodeRangeProperties ?? [];
        expect(ranges).toHaveLength(2);
        for (const range of ranges) {
          expect(Object.keys(range).sort()).toEqual(['container', 'targetNodes']);
          expect(range.container?.privileged).toBe(privileged);
        }
      }
    });
  });

  describe('additions', () => {
    it('adds ulimits, the awslogs group, the timeout, propagateTags and retry rules after the exit-0 rule', () => {
      const { request } = translateApp(
        echoApp({ name: 'echo-${app_id}' }),
        opts({
          ulimits: { nofile: '65536', memlock: '-1:-1' },
          log_group: '/ml/jobs',
          timeout: 3600,
          propagate_tags: true,
          retry_rules: ['retry:status_reason:Host EC2*', 'exit:exit_code:*'],
        }),
        fixedNamer,
      );
      const container = request.registerJobDefinition.nodeProperties?.nodeRangeProperties?.[0]?.container;
      expect(container?.ulimits).toEqual([
        { name: 'memlock', softLimit: -1, hardLimit: -1 },
        { name: 'nofile', softLimit: 65536, hardLimit: 65536 },
      ]);
      expect(container?.logConfiguration).toEqual({
        logDriver: 'awslogs',
        options: { 'awslogs-group': '/ml/jobs' },
      });
      expect(request.registerJobDefinition.retryStrategy).toEqual({
        attempts: 1,
        evaluateOnExit: [
          { onExitCode: '0', action: 'EXIT' },
          { onStatusReason: 'Host EC2*', action: 'RETRY' },
          { onExitCode: '*', action: 'EXIT' },
        ],
      });
      expect(request.submitJob.timeout).toEqual({ attemptDurationSeconds: 3600 });
      expect(request.submitJob.propagateTags).toBe(true);
    });

    it('rewrites a local image to <image_repo>:<hash> and rejects it without image_repo', () => {
      const app = echoApp();
      app.roles[0]!.image = 'sha256:abc123';
      const { request, app: submitted } = translateApp(
        app,
        opts({ image_repo: 'example.com/me/img' }),
        fixedNamer,
      );
      expect(request.registerJobDefinition.nodeProperties?.nodeRangeProperties?.[0]?.container?.image).toBe(
        'example.com/me/img:abc123',
      );
      expect(submitted.roles[0]?.image).toBe('example.com/me/img:abc123');
      expect(app.roles[0]?.image).toBe('sha256:abc123');
      expect(issuesOf(() => translateApp(app, opts(), fixedNamer))).toEqual([
        {
          path: 'app.roles.0.image',
          message:
            'must specify the image repository via `image_repo` config to be able to upload local image sha256:abc123; ' +
            'push the image to a registry (or set image_repo to where you pushed it)',
        },
      ]);
    });

    it('does not modify the app it translates', () => {
      const app = appFromTorchx(dryrunFixture.appdef);
      const before = cloneAppDef(app);
      translateApp(app, opts(), fixedNamer);
      expect(app).toEqual(before);
    });
  });

  describe('job names', () => {
    it.each([
      ['exp/train.v2', 'exp-train-v2-42'],
      ['__private', 'private-42'],
      ['...', 'app-42'],
      ['torchx_utils_python', 'torchx_utils_python-42'],
    ])('sanitises app name %s into job name %s', (name, jobName) => {
      expect(translateApp(echoApp({ name }), opts(), fixedNamer).request.submitJob.jobName).toBe(jobName);
    });

    it('truncates a long app name so that the longest random suffix still fits in 128 characters', () => {
      const { submitJob } = translateApp(
        echoApp({ name: 'a'.repeat(200) }),
        opts(),
        (p) => `${p}-tqsrbbl31fnwwd`,
      ).request;
      expect(submitJob.jobName).toBe(`${'a'.repeat(113)}-tqsrbbl31fnwwd`);
      expect(submitJob.jobName?.length).toBe(128);
    });

    it('keeps the original app name in the app-name tag', () => {
      const { request } = translateApp(echoApp({ name: 'exp/train.v2' }), opts(), fixedNamer);
      expect(request.submitJob.tags?.['torchx.pytorch.org/app-name']).toBe('exp/train.v2');
    });
  });

  describe('job definition sharing', () => {
    it('names a definition that does not embed the job name by its content hash and shares it between runs', () => {
      const first = translateApp(echoApp(), opts(), (p) => `${p}-bc`).request;
      const second = translateApp(echoApp(), opts(), (p) => `${p}-t4rcs9x6sv1m`).request;
      const hash = definitionHash(first.registerJobDefinition);
      expect(hash).toMatch(/^[0-9a-f]{12}$/);
      expect(first.registerJobDefinition.jobDefinitionName).toBe(`echo-${hash}`);
      expect(first.submitJob.jobDefinition).toBe(`echo-${hash}`);
      expect(second.registerJobDefinition).toEqual(first.registerJobDefinition);
      expect(second.submitJob.jobName).not.toBe(first.submitJob.jobName);
      expect(isSharedDefinition(first)).toBe(true);
    });

    it('gives different content a different definition name', () => {
      const base = translateApp(echoApp(), opts(), fixedNamer).request.registerJobDefinition
        .jobDefinitionName;
      const otherUser = translateApp(echoApp(), opts({ user: 'bob' }), fixedNamer).request
        .registerJobDefinition.jobDefinitionName;
      const otherArgs = echoApp();
      otherArgs.roles[0]!.args = ['bye'];
      const otherCommand = translateApp(otherArgs, opts(), fixedNamer).request.registerJobDefinition
        .jobDefinitionName;
      expect(new Set([base, otherUser, otherCommand]).size).toBe(3);
    });

    it('moves env values holding the job name (TORCHX_JOB_ID) into SubmitJob node overrides', () => {
      const app = echoApp();
      app.roles[0]!.env = { TORCHX_JOB_ID: 'aws_batch://torchx/${app_id}', LOGLEVEL: 'INFO' };
      const first = translateApp(app, opts(), (p) => `${p}-bc`).request;
      const second = translateApp(app, opts(), (p) => `${p}-cd`).request;
      expect(second.registerJobDefinition).toEqual(first.registerJobDefinition);
      expect(
        first.registerJobDefinition.nodeProperties?.nodeRangeProperties?.[0]?.container?.environment,
      ).toEqual([
        { name: 'LOGLEVEL', value: 'INFO' },
        { name: 'TORCHX_ROLE_IDX', value: '0' },
        { name: 'TORCHX_ROLE_NAME', value: 'echo' },
      ]);
      expect(first.submitJob.nodeOverrides).toEqual({
        nodePropertyOverrides: [
          {
            targetNodes: '0:0',
            containerOverrides: {
              environment: [{ name: 'TORCHX_JOB_ID', value: 'aws_batch://torchx/echo-bc' }],
            },
          },
        ],
      });
    });

    it('keeps a definition whose command embeds the job name per run, named after the job, as TorchX', () => {
      const app = echoApp();
      app.roles[0]!.args = ['--run', '${app_id}'];
      app.roles[0]!.env = { TORCHX_JOB_ID: 'aws_batch://torchx/${app_id}' };
      const { request } = translateApp(app, opts(), fixedNamer);
      expect(request.registerJobDefinition.jobDefinitionName).toBe('echo-42');
      expect(request.submitJob.jobDefinition).toBe('echo-42');
      expect(request.submitJob).not.toHaveProperty('nodeOverrides');
      expect(
        request.registerJobDefinition.nodeProperties?.nodeRangeProperties?.[0]?.container?.environment,
      ).toContainEqual({ name: 'TORCHX_JOB_ID', value: 'aws_batch://torchx/echo-42' });
      expect(isSharedDefinition(request)).toBe(false);
    });
  });

  describe('validation', () => {
    it("rejects more than five roles with TorchX's message and link", () => {
      const role = echoApp().roles[0]!;
      const app = echoApp({ roles: Array.from({ length: 6 }, (_, i) => ({ ...role, name: `r${i}` })) });
      expect(() => translateApp(app, opts(), fixedNamer)).toThrow(AppNotSupportedError);
      expect(() => translateApp(app, opts(), fixedNamer)).toThrow(
        'AWS Batch only supports <= 5 roles (NodeGroups). See: https://docs.aws.amazon.com/batch/latest/userguide/multi-node-parallel-jobs.html#mnp-node-groups',
      );
    });

    it('names every field Batch would reject, before anything is sent', () => {
      const app = echoApp({ metadata: { 'aws:owner': 'x', ['k'.repeat(129)]: 'v', long: 'v'.repeat(257) } });
      const role = app.roles[0]!;
      role.numReplicas = 0;
      role.maxRetries = 11;
      role.image = '<NONE>';
      role.resource = makeResource({
        cpu: 1.5,
        gpu: 0.5,
        memMB: -1,
        devices: { 'nvidia.com/gpu': 1, 'vpc.amazonaws.com/efa': 1.5 },
      });
      role.env = { AWS_BATCH_JOB_ID: 'mine' };
      const issues = issuesOf(() =>
        translateApp(
          app,
          opts({
            priority: 10000,
            timeout: 59,
            share_id: 'team-a',
            log_group: 'bad group',
            user: 'u'.repeat(257),
            ulimits: { nofile: 'x' },
            retry_rules: ['maybe'],
          }),
          fixedNamer,
        ),
      );
      expect(issues.map((i) => i.path)).toEqual([
        'app.roles.0.numReplicas',
        'app.roles.0.maxRetries',
        'app.roles.0.image',
        'app.roles.0.resource.memMB',
        'app.roles.0.resource.cpu',
        'app.roles.0.resource.gpu',
        'app.roles.0.resource.devices.nvidia.com/gpu',
        'app.roles.0.resource.devices.vpc.amazonaws.com/efa',
        'app.roles.0.env.AWS_BATCH_JOB_ID',
        'cfg.priority',
        'cfg.timeout',
        'cfg.share_id',
        'cfg.log_group',
        'app.metadata.aws:owner',
        `app.metadata.${'k'.repeat(129)}`,
        'app.metadata.long',
        'cfg.user',
        'cfg.ulimits.nofile',
        'cfg.retry_rules.0',
      ]);
      expect(issues).toContainEqual({
        path: 'app.roles.0.maxRetries',
        message: 'must be 0 to 10 on AWS Batch (it sets retryStrategy.attempts, 1 to 10), got 11',
      });
      expect(issues).toContainEqual({ path: 'cfg.timeout', message: 'must be at least 60 seconds, got 59' });
      expect(issues).toContainEqual({ path: 'cfg.priority', message: 'must be 0 to 9999, got 10000' });
      expect(issues).toContainEqual({
        path: 'app.roles.0.resource.devices.nvidia.com/gpu',
        message:
          "unknown device 'nvidia.com/gpu'; AWS Batch supports vpc.amazonaws.com/efa and aws.amazon.com/neurondevice",
      });
    });

    it('rejects more than 50 tags', () => {
      const metadata = Object.fromEntries(Array.from({ length: 48 }, (_, i) => [`k${i}`, 'v']));
      expect(issuesOf(() => translateApp(echoApp({ metadata }), opts(), fixedNamer))).toEqual([
        { path: 'app.metadata', message: "makes 51 tags with TorchX's three; AWS Batch allows 50" },
      ]);
      delete metadata.k0;
      expect(() => translateApp(echoApp({ metadata }), opts(), fixedNamer)).not.toThrow();
    });

    it('rejects a job definition above 24 KiB and a SubmitJob payload above 30 KiB', () => {
      const big = echoApp();
      big.roles[0]!.args = ['x'.repeat(25 * 1024)];
      const [definitionIssue] = issuesOf(() => translateApp(big, opts(), fixedNamer));
      expect(definitionIssue?.path).toBe('app');
      expect(definitionIssue?.message).toMatch(
        /^the job definition is \d+ bytes; AWS Batch allows 24576 \(24 KiB\)/,
      );

      const bigOverride = echoApp();
      bigOverride.roles[0]!.env = { TORCHX_JOB_ID: `\${app_id}${'x'.repeat(31 * 1024)}` };
      const [submitIssue] = issuesOf(() => translateApp(bigOverride, opts(), fixedNamer));
      expect(submitIssue?.message).toMatch(
        /^the SubmitJob payload is \d+ bytes; AWS Batch allows 30720 \(30 KiB\)/,
      );
    });

    it('runs the same checks in validate, plus the base rules and the run options', () => {
      const { scheduler } = mockedScheduler();
      const noResource = echoApp();
      noResource.roles[0]!.resource = makeResource({ cpu: -1, gpu: -1, memMB: -1 });
      expect(() => scheduler.validate(noResource, { queue: 'q' })).toThrow(/No resource for role: alpine:3/);
      expect(() => scheduler.validate(echoApp(), {})).toThrow(InvalidRunConfigError);
      expect(issuesOf(() => scheduler.validate(echoApp(), { queue: 'q', timeout: 5 }))).toEqual([
        { path: 'cfg.timeout', message: 'must be at least 60 seconds, got 5' },
      ]);
      expect(() => scheduler.validate(echoApp(), { queue: 'q' })).not.toThrow();
    });

    /** A scheduler drawing 1-character suffixes, an app embedding the job name, and its definition's size. */
    function oneCharacterSuffix() {
      const { scheduler } = mockedScheduler({ uniqueNamer: (p) => `${p}-b` });
      const app = echoApp();
      app.roles[0]!.args = ['${app_id}', ''];
      const size = (a: AppDef) =>
        Buffer.byteLength(
          JSON.stringify(translateApp(a, opts(), (p) => `${p}-b`).request.registerJobDefinition),
        );
      return { scheduler, app, size };
    }

    it('sizes the payload in validate with the longest possible job name', () => {
      const { scheduler, app, size } = oneCharacterSuffix();
      // 5 bytes under the quota with a 1-character suffix; the name appears twice, so 14 characters exceed it.
      app.roles[0]!.args = ['${app_id}', 'x'.repeat(24 * 1024 - size(app) - 5)];
      expect(size(app)).toBe(24 * 1024 - 5);
      expect(() => scheduler.submitDryrun(app, { queue: 'q' })).not.toThrow();
      expect(() => scheduler.validate(app, { queue: 'q' })).toThrow(/the job definition is \d+ bytes/);
    });

    it("checks validate's longest-name sizes in the one translation of validatedDryrun", () => {
      const { scheduler, app, size } = oneCharacterSuffix();
      const cfg = scheduler.runOpts().resolve({ queue: 'q' });
      expect(scheduler.validatedDryrun(app, cfg).request).toEqual(scheduler.submitDryrun(app, cfg).request);
      // Fits with the 1-character suffix drawn, not with the longest one: rejected as validate rejects it.
      app.roles[0]!.args = ['${app_id}', 'x'.repeat(24 * 1024 - size(app) - 5)];
      expect(() => scheduler.submitDryrun(app, cfg)).not.toThrow();
      expect(() => scheduler.validatedDryrun(app, cfg)).toThrow(/the job definition is \d+ bytes/);
    });
  });
});
