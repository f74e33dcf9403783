/**
 * The JSON facts of the aws_batch translation: the content hash that names a shared job definition, and the
 * size quotas checked at the exact byte.
 */
import { hash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  type AwsBatchOpts,
  awsBatchRunOpts,
  definitionHash,
  translateApp,
} from '../../../lib/schedulers/aws-batch/index.js';
import {
  type AppDef,
  makeAppDef,
  makeResource,
  makeRole,
  ValidationError,
} from '../../../lib/specs/index.js';
import { APPS } from '../torchx-golden/cases.js';

/**
 * Canonical JSON written another way: `JSON.stringify` with every object rebuilt in sorted key order (right
 * for objects without integer-like keys, which objects list first whatever the insertion order).
 */
function referenceCanonical(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) =>
    item !== null && typeof item === 'object' && !Array.isArray(item)
      ? Object.fromEntries(Object.entries(item).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : item,
  );
}

/** The first 12 hex characters of the SHA-256 of `text`. */
const contentHash = (text: string) => hash('sha256', text, 'hex').slice(0, 12);

const opts = (): AwsBatchOpts => awsBatchRunOpts('alice').resolve({ queue: 'q' }) as AwsBatchOpts;
const namer = (prefix: string) => `${prefix}-k3x9`;

/** An app whose second argument is `padding`; `perRun` puts the job name in the command. */
function app(padding: string, perRun: boolean): AppDef {
  return makeAppDef({
    name: 'train',
    roles: [
      makeRole({
        name: 'trainer',
        image: 'alpine:3',
        entrypoint: 'python',
        args: [perRun ? '--id=${app_id}' : '--id', padding],
        env: { TORCHX_JOB_ID: 'aws_batch://torchx/${app_id}', LOGLEVEL: 'INFO' },
        numReplicas: 2,
        resource: makeResource({ cpu: 1, gpu: 0, memMB: 1024 }),
      }),
    ],
  });
}

describe('definitionHash', () => {
  it('hashes a job definition by its content, whatever its name and key order', () => {
    const definition = { jobDefinitionName: 'a', type: 'multinode' as const, tags: { b: '1', a: '2' } };
    const reordered = { tags: { a: '2', b: '1' }, type: 'multinode' as const, jobDefinitionName: 'b' };
    expect(definitionHash(definition)).toBe(definitionHash(reordered));
    expect(definitionHash(definition)).toBe(contentHash('{"tags":{"a":"2","b":"1"},"type":"multinode"}'));
    expect(definitionHash(definition)).toMatch(/^[0-9a-f]{12}$/);
  });
});

describe('the job definition content hash', () => {
  /** The hash of the definition's content written the plain way. */
  const referenceHash = (definition: object) => {
    const { jobDefinitionName: _name, ...content } = definition as Record<string, unknown>;
    return contentHash(referenceCanonical(content));
  };

  it('is the same as the plain canonical form gives, for containers with every option', () => {
    const cfg = awsBatchRunOpts('alice').resolve({
      queue: 'q',
      ulimits: { nofile: '1024:4096', core: '0' },
      job_role_arn: 'arn:aws:iam::123456789012:role/job',
      execution_role_arn: 'arn:aws:iam::123456789012:role/exec',
      log_group: '/my/logs',
      privileged: true,
      share_id: 'team',
      retry_rules: ['retry:exit_code:137'],
    }) as AwsBatchOpts;
    // TorchX's multi-role golden app: mounts of every kind, devices, an instance type, macros.
    const app = APPS['multi-role']?.();
    if (app === undefined) throw new Error('no multi-role app');
    app.metadata = { z: 'last', a: 'first' };
    const { registerJobDefinition } = translateApp(app, cfg, (p) => `${p}-k3x9`).request;
    expect(definitionHash(registerJobDefinition)).toBe(referenceHash(registerJobDefinition));
  });

  it('counts a container member the translation does not set (written the general way, not dropped)', () => {
    const { registerJobDefinition } = translateApp(app('', false), opts(), namer).request;
    const container = registerJobDefinition.nodeProperties?.nodeRangeProperties?.[0]?.container;
    if (container === undefined) throw new Error('no container');
    const before = definitionHash(registerJobDefinition);
    Object.assign(container, { readonlyRootFilesystem: true });
    expect(definitionHash(registerJobDefinition)).toBe(referenceHash(registerJobDefinition));
    expect(definitionHash(registerJobDefinition)).not.toBe(before);
  });
});

describe('aws_batch size quotas', () => {
  const definitionBytes = (a: AppDef) =>
    Buffer.byteLength(JSON.stringify(translateApp(a, opts(), namer).request.registerJobDefinition), 'utf8');

  /** Padding of exactly `bytes` JSON bytes, with two-byte characters and an escape in it. */
  const padding = (bytes: number) => `é\n${'x'.repeat(bytes - 4)}`;

  it.each([
    ['a definition shared between runs', false],
    ['a per-run definition (the command holds the job name)', true],
  ])('accepts %s of exactly 24 KiB and rejects it one byte larger, with its exact size', (_name, perRun) => {
    const room = 24 * 1024 - definitionBytes(app('', perRun));
    expect(definitionBytes(app(padding(room), perRun))).toBe(24 * 1024);
    expect(() => translateApp(app(padding(room), perRun), opts(), namer)).not.toThrow();
    expect(() => translateApp(app(padding(room + 1), perRun), opts(), namer)).toThrow(ValidationError);
    expect(() => translateApp(app(padding(room + 1), perRun), opts(), namer)).toThrow(
      /^The app cannot run on AWS Batch: app: the job definition is 24577 bytes; AWS Batch allows 24576 \(24 KiB\)/,
    );
  });

  it('accepts a SubmitJob payload of exactly 30 KiB and rejects it one byte larger, with its exact size', () => {
    /** The env value holding the job name goes to a node override of SubmitJob. */
    const withOverride = (pad: string) => {
      const a = app('', false);
      if (a.roles[0]) a.roles[0].env.TORCHX_JOB_ID = `aws_batch://torchx/\${app_id}${pad}`;
      return a;
    };
    const submitBytes = (a: AppDef) =>
      Buffer.byteLength(JSON.stringify(translateApp(a, opts(), namer).request.submitJob), 'utf8');
    const room = 30 * 1024 - submitBytes(withOverride(''));
    expect(submitBytes(withOverride(padding(room)))).toBe(30 * 1024);
    expect(() => translateApp(withOverride(padding(room)), opts(), namer)).not.toThrow();
    expect(() => translateApp(withOverride(padding(room + 1)), opts(), namer)).toThrow(
      /^The app cannot run on AWS Batch: app: the SubmitJob payload is 30721 bytes; AWS Batch allows 30720/,
    );
  });
});
