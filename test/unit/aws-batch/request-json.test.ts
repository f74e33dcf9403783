/**
 * The JSON facts the aws_batch translation learns without serializing its requests: canonical form (hash
 * names), exact size and job-name occurrences, size bound; and the size quotas checked at the exact byte.
 */
import { describe, expect, it } from 'vitest';
import {
  type AwsBatchOpts,
  awsBatchRunOpts,
  boundJson,
  canonicalArrayShape,
  canonicalJson,
  canonicalShape,
  contentHash,
  definitionHash,
  measureJson,
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

/** Canonical JSON written the plain way: every object's own keys sorted, undefined members left out. */
function referenceCanonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => referenceCanonical(v) ?? '').join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const members = Object.keys(value)
      .sort()
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${referenceCanonical((value as Record<string, unknown>)[k])}`);
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(value);
}

/** Values with what JSON escapes or encodes in several bytes, and keys in an order sorting changes. */
const SAMPLES: unknown[] = [
  { b: 1, a: [true, 'x', null], c: { z: 'quote"d', y: 'back\\slash', x: undefined } },
  { text: 'ctl\u0001 tab\t newline\n', lone: 'a\ud800b', pair: '😀', accents: 'é ü ß', del: '\u007f' },
  { 10: 'ten', 2: 'two', b: 'bee', A: 'upper', _: 'under' },
  [[], {}, [{}], '', 0, -1.5e-7, 1e21],
];

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

describe('canonicalJson', () => {
  it.each(SAMPLES.map((s) => [JSON.stringify(s).slice(0, 40), s] as const))(
    'sorts keys and leaves undefined out: %s',
    (_name, sample) => {
      expect(canonicalJson(sample)).toBe(referenceCanonical(sample));
    },
  );

  it('writes a shaped object without sorting, and the same text as without its shape', () => {
    const pair = canonicalShape({ value: null, name: null });
    const shape = canonicalShape({ list: canonicalArrayShape(pair), title: null });
    const value = { title: 't', list: [{ value: 'v', name: 'n' }] };
    expect(canonicalJson(value, { shape })).toBe('{"list":[{"name":"n","value":"v"}],"title":"t"}');
    expect(canonicalJson(value, { shape })).toBe(canonicalJson(value));
  });

  it("falls back to sorting an object whose keys are not its shape's, so a shape never changes the text", () => {
    const shape = canonicalShape({ name: null, value: null });
    const extra = { value: 'v', name: 'n', added: 'later' };
    expect(canonicalJson(extra, { shape })).toBe('{"added":"later","name":"n","value":"v"}');
    const fewer = { name: 'n' };
    expect(canonicalJson(fewer, { shape })).toBe('{"name":"n"}');
  });

  it('leaves the omitted key of the top-level object out, and only there', () => {
    const value = { jobDefinitionName: 'x', inner: { jobDefinitionName: 'kept' } };
    expect(canonicalJson(value, { omitKey: 'jobDefinitionName' })).toBe(
      '{"inner":{"jobDefinitionName":"kept"}}',
    );
  });

  it('hashes a job definition by its content, whatever its name and key order', () => {
    const definition = { jobDefinitionName: 'a', type: 'multinode' as const, tags: { b: '1', a: '2' } };
    const reordered = { tags: { a: '2', b: '1' }, type: 'multinode' as const, jobDefinitionName: 'b' };
    expect(definitionHash(definition)).toBe(definitionHash(reordered));
    expect(definitionHash(definition)).toBe(contentHash('{"tags":{"a":"2","b":"1"},"type":"multinode"}', 12));
    expect(definitionHash(definition)).toMatch(/^[0-9a-f]{12}$/);
  });
});

describe('the job definition content hash', () => {
  /** The hash of the definition's content written the plain way. */
  const referenceHash = (definition: object) => {
    const { jobDefinitionName: _name, ...content } = definition as Record<string, unknown>;
    return contentHash(referenceCanonical(content), 12);
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

describe('measureJson and boundJson', () => {
  it.each(SAMPLES.map((s) => [JSON.stringify(s).slice(0, 40), s] as const))(
    'measure the UTF-8 bytes of JSON.stringify exactly, and bound them from above: %s',
    (_name, sample) => {
      const json = JSON.stringify(sample);
      const bytes = Buffer.byteLength(json, 'utf8');
      expect(measureJson(sample).bytes).toBe(bytes);
      expect(boundJson(sample)).toBeGreaterThanOrEqual(bytes);
    },
  );

  it('count a needle as split counts it, in keys, values and escaped text alike', () => {
    const value = { 'job-1': ['job-1job-1', 'xjob-1', 1], other: 'ctl\u0001job-1', n: null };
    const json = JSON.stringify(value);
    for (const needle of ['job-1', 'u0001', 'null', '1']) {
      expect(measureJson(value, needle).occurrences).toBe(json.split(needle).length - 1);
    }
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
