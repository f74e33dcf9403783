import { describe, expect, it } from 'vitest';
import {
  buildCfg,
  parseIni,
  runOptsFromDescriptions,
  TxsConfig,
  UsageError,
} from '../../../lib/cli/index.js';
import type { RunOptDescription } from '../../../lib/specs/index.js';

const BATCH_OPTS: RunOptDescription[] = [
  { name: 'queue', type: 'str', default: null, required: true, help: 'job queue', aliases: [] },
  { name: 'priority', type: 'int', default: 0, required: false, help: 'priority', aliases: [] },
  { name: 'privileged', type: 'bool', default: false, required: false, help: 'privileged', aliases: [] },
  { name: 'tags', type: 'dict[str,str]', default: null, required: false, help: 'tags', aliases: [] },
  {
    name: 'job_role_arn',
    type: 'str',
    default: null,
    required: false,
    help: 'role',
    aliases: ['jobRoleArn'],
  },
  { name: 'dependencies', type: 'list[str]', default: null, required: false, help: 'deps', aliases: [] },
];

function configOf(text: string, file = '/p/.txsconfig'): TxsConfig {
  return new TxsConfig([[file, parseIni(text, file)]]);
}

describe('runOptsFromDescriptions', () => {
  it('rebuilds the declared options with their types, defaults and aliases', () => {
    const opts = runOptsFromDescriptions(BATCH_OPTS);
    expect(opts.get('jobRoleArn')?.name).toBe('job_role_arn');
    expect(opts.get('priority')).toMatchObject({ type: 'int', default: 0, required: false });
    expect(opts.describe().map((o) => o.name)).toEqual(BATCH_OPTS.map((o) => o.name));
  });
});

describe('buildCfg', () => {
  const runOpts = runOptsFromDescriptions(BATCH_OPTS);

  it('casts -cfg values to their option types so typed values go over the wire', () => {
    const cfg = buildCfg({
      scheduler: 'aws_batch',
      runOpts,
      literal: 'queue=gpu,priority=5,privileged=True,tags=team:ml;env:dev,dependencies=a;b',
      config: new TxsConfig(),
      warn: () => undefined,
    });
    expect(cfg).toEqual({
      queue: 'gpu',
      priority: 5,
      privileged: true,
      tags: { team: 'ml', env: 'dev' },
      dependencies: ['a', 'b'],
    });
  });

  it('renames camelCase aliases to the snake_case option', () => {
    const cfg = buildCfg({
      scheduler: 'aws_batch',
      runOpts,
      literal: 'jobRoleArn=arn:aws:iam::1:role/r',
      config: new TxsConfig(),
      warn: () => undefined,
    });
    expect(cfg).toEqual({ job_role_arn: 'arn:aws:iam::1:role/r' });
  });

  it('warns about and drops unknown -cfg keys, as TorchX does', () => {
    const warnings: string[] = [];
    const cfg = buildCfg({
      scheduler: 'aws_batch',
      runOpts,
      literal: 'queue=q,colour=blue',
      config: new TxsConfig(),
      warn: (m) => warnings.push(m),
    });
    expect(cfg).toEqual({ queue: 'q' });
    expect(warnings).toEqual([expect.stringContaining('`colour` is not a run option of aws_batch')]);
  });

  it('fills keys from the scheduler section of .txsconfig, -cfg winning', () => {
    const cfg = buildCfg({
      scheduler: 'aws_batch',
      runOpts,
      literal: 'priority=9',
      config: configOf(
        '[aws_batch]\nqueue = from-file\npriority = 1\nprivileged = yes\ndependencies = x;y\n',
      ),
      warn: () => undefined,
    });
    expect(cfg).toEqual({ priority: 9, queue: 'from-file', privileged: true, dependencies: ['x', 'y'] });
  });

  it('reads None in the file as unset and warns about keys that are not options', () => {
    const warnings: string[] = [];
    const cfg = buildCfg({
      scheduler: 'aws_batch',
      runOpts,
      config: configOf('[aws_batch]\nqueue = None\ncolor = red\n[aws_sagemaker]\nrole = r\n'),
      warn: (m) => warnings.push(m),
    });
    expect(cfg).toEqual({ queue: null });
    expect(warnings).toEqual([
      expect.stringMatching(/`color = red` in the \[aws_batch\] section of \/p\/\.txsconfig/),
    ]);
  });

  it('rejects a value of the wrong type with the option name and where it came from', () => {
    const attempt = () =>
      buildCfg({
        scheduler: 'aws_batch',
        runOpts,
        literal: 'priority=high',
        config: new TxsConfig(),
        warn: () => undefined,
      });
    expect(attempt).toThrow(UsageError);
    expect(attempt).toThrow(/bad run option in -cfg: Run option: priority, must be an integer/);
    expect(() =>
      buildCfg({
        scheduler: 'aws_batch',
        runOpts,
        config: configOf('[aws_batch]\nprivileged = sometimes\n'),
        warn: () => undefined,
      }),
    ).toThrow(
      /bad run option in \[aws_batch\] in \/p\/\.txsconfig: Run option: privileged, must be a boolean/,
    );
  });

  it('rejects a malformed literal', () => {
    expect(() =>
      buildCfg({
        scheduler: 'aws_batch',
        runOpts,
        literal: 'queue',
        config: new TxsConfig(),
        warn: () => undefined,
      }),
    ).toThrow(/does not have at least one `key=value` pair/);
  });
});
