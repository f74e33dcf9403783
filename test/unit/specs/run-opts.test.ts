import { describe, expect, it } from 'vitest';
import {
  InvalidRunConfigError,
  parseKeyValueLiteral,
  RunOpts,
  snakeToCamel,
} from '../../../lib/specs/index.js';

function batchLikeOpts(): RunOpts {
  return new RunOpts()
    .add('queue', { type: 'str', required: true, help: 'queue to schedule job in' })
    .add('privileged', { type: 'bool', default: false, help: 'run privileged' })
    .add('priority', { type: 'int', default: 0, help: 'priority' })
    .add('ratio', { type: 'float', help: 'a ratio' })
    .add('dependencies', { type: 'list[str]', help: 'deps' })
    .add('tags', { type: 'dict[str,str]', help: 'tags' })
    .add('metric_definitions', { type: 'list[dict[str,str]]', help: 'metrics' });
}

describe('RunOpts', () => {
  describe('add', () => {
    it('rejects a required option with a default', () => {
      expect(() => new RunOpts().add('x', { type: 'str', required: true, default: 'a', help: '' })).toThrow(
        'Required option: x must not specify default value. Given: a',
      );
    });

    it('rejects a default of the wrong type', () => {
      expect(() => new RunOpts().add('x', { type: 'int', default: 'a', help: '' })).toThrow(
        'Option: x, must be of type: int. Given: a (str)',
      );
    });

    it('registers the camelCase alias of a snake_case name', () => {
      const opts = batchLikeOpts();
      expect(opts.get('metricDefinitions')?.name).toBe('metric_definitions');
      expect(snakeToCamel('job_role_arn')).toBe('jobRoleArn');
    });
  });

  describe('resolve', () => {
    it('fills defaults and keeps unknown keys', () => {
      expect(batchLikeOpts().resolve({ queue: 'q', extra: 'kept' })).toEqual({
        queue: 'q',
        extra: 'kept',
        privileged: false,
        priority: 0,
        ratio: null,
        dependencies: null,
        tags: null,
        metric_definitions: null,
      });
    });

    it('keeps the keys in the order given (aliases renamed in place), then the options not given in declaration order', () => {
      const resolved = batchLikeOpts().resolve({
        metricDefinitions: null,
        extra: 'kept',
        queue: 'q',
        priority: 3,
      });
      expect(Object.keys(resolved)).toEqual([
        'metric_definitions',
        'extra',
        'queue',
        'priority',
        'privileged',
        'ratio',
        'dependencies',
        'tags',
      ]);
      expect(resolved.priority).toBe(3);
    });

    it('gives each resolution its own copy of a list or map default', () => {
      const opts = new RunOpts().add('tags', { type: 'dict[str,str]', default: { a: '1' }, help: 'tags' });
      const first = opts.resolve({});
      (first.tags as Record<string, string>).a = 'changed';
      expect(opts.resolve({}).tags).toEqual({ a: '1' });
    });

    it('sees options added after a first resolution', () => {
      const opts = batchLikeOpts();
      opts.resolve({ queue: 'q' });
      opts.add('late', { type: 'int', default: 7, help: 'added later' });
      expect(opts.resolve({ queue: 'q' }).late).toBe(7);
    });

    it("raises TorchX's message for a missing required option", () => {
      expect(() => batchLikeOpts().resolve({})).toThrow(
        'Required run option: queue, must be provided and not `None`. Given: <EMPTY>',
      );
    });

    it('fills an option the caller left out from the fallbacks, before its default, as if given last', () => {
      const opts = batchLikeOpts().add('user', { type: 'str', default: 'os-user', help: 'user' });
      const resolved = opts.resolve({ priority: 3, queue: 'q' }, { user: 'alice' });
      expect(resolved.user).toBe('alice');
      expect(Object.keys(resolved).slice(0, 3)).toEqual(['priority', 'queue', 'user']);
      expect(opts.resolve({ queue: 'q', user: 'bob' }, { user: 'alice' }).user).toBe('bob');
      expect(opts.resolve({ queue: 'q', user: null }, { user: 'alice' }).user).toBe('alice');
      expect(opts.resolve({ queue: 'q' }).user).toBe('os-user');
      // A fallback that is not an option is not added.
      expect(opts.resolve({ queue: 'q' }, { nope: 1 })).not.toHaveProperty('nope');
    });

    it('quotes only what the caller gave when it refuses, never the fallbacks', () => {
      const opts = batchLikeOpts().add('user', { type: 'str', help: 'user' });
      expect(() => opts.resolve({}, { user: 'alice' })).toThrow(
        'Required run option: queue, must be provided and not `None`. Given: <EMPTY>',
      );
    });

    it("raises TorchX's message for a wrong type, naming the key", () => {
      const err = (() => {
        try {
          batchLikeOpts().resolve({ queue: 5 });
        } catch (e) {
          return e as InvalidRunConfigError;
        }
      })();
      expect(err).toBeInstanceOf(InvalidRunConfigError);
      expect(err?.message).toBe(
        'Run option: queue, must be of type: str, but was: 5 (int). Given: {"queue":5}',
      );
      expect(err?.cfgKey).toBe('queue');
      expect(err?.issues[0]?.path).toBe('cfg.queue');
    });

    it('rejects a boolean for an int option and a float for an int option', () => {
      expect(() => batchLikeOpts().resolve({ queue: 'q', priority: true })).toThrow(/must be of type: int/);
      expect(() => batchLikeOpts().resolve({ queue: 'q', priority: 1.5 })).toThrow(/must be of type: int/);
    });

    it('accepts a list of string maps (TorchX rejected any non-empty one)', () => {
      const out = batchLikeOpts().resolve({
        queue: 'q',
        metric_definitions: [{ Name: 'loss', Regex: 'l=(.*)' }],
      });
      expect(out.metric_definitions).toEqual([{ Name: 'loss', Regex: 'l=(.*)' }]);
      expect(() =>
        batchLikeOpts().resolve({ queue: 'q', metric_definitions: [{ Name: 1 }] as never }),
      ).toThrow(/List\[Dict\[str, str\]\]/);
    });

    it('renames camelCase aliases to the snake_case name', () => {
      const out = batchLikeOpts().resolve({ queue: 'q', metricDefinitions: [] });
      expect(out).toHaveProperty('metric_definitions', []);
      expect(out).not.toHaveProperty('metricDefinitions');
    });

    it("casts TorchX's string forms (what -cfg gives) with each option's declared type", () => {
      expect(
        batchLikeOpts().resolve({
          queue: 'q',
          privileged: 'True',
          priority: '5',
          ratio: '0.5',
          dependencies: 'a,b',
          tags: 'team:ml;env:dev',
        }),
      ).toMatchObject({
        queue: 'q',
        privileged: true,
        priority: 5,
        ratio: 0.5,
        dependencies: ['a', 'b'],
        tags: { team: 'ml', env: 'dev' },
      });
    });

    it('rejects a string form that does not cast, naming the option', () => {
      expect(() => batchLikeOpts().resolve({ queue: 'q', priority: 'high' })).toThrow(
        'Run option: priority, must be an integer (e.g. 5), but was: high',
      );
    });

    it('rejects an option given under both spellings with different values', () => {
      expect(() =>
        new RunOpts().add('share_id', { type: 'str', help: '' }).resolve({ share_id: 'a', shareId: 'b' }),
      ).toThrow(/given twice/);
    });
  });

  describe('cfgFromStr', () => {
    const opts = batchLikeOpts();

    it('returns an empty cfg for an empty string', () => {
      expect(opts.cfgFromStr('')).toEqual({});
    });

    it('casts values to their option types', () => {
      expect(opts.cfgFromStr('queue=q,privileged=True,priority=7,ratio=0.5')).toEqual({
        queue: 'q',
        privileged: true,
        priority: 7,
        ratio: 0.5,
      });
    });

    it("takes TorchX's bool spellings true/false in any case and refuses yes, 1 and on naming the option", () => {
      expect(opts.cfgFromStr('privileged=TRUE')).toEqual({ privileged: true });
      expect(opts.cfgFromStr('privileged=False')).toEqual({ privileged: false });
      for (const value of ['yes', '1', 'on', 'no', '0']) {
        expect(() => opts.cfgFromStr(`privileged=${value},queue=q`)).toThrow(
          /Run option: privileged, must be true or false/,
        );
      }
    });

    it('warns about keys that are not options with the closest option name', () => {
      expect(opts.unknownKeyWarnings({ prioirty: 5, queue: 'q' }, 'aws_batch')).toEqual([
        '`prioirty` is not a run option of aws_batch; ignoring it; did you mean `priority`?',
      ]);
      expect(opts.unknownKeyWarnings({ zzzzzz: 1 }, 'aws_batch')[0]).toContain('see `txs runopts aws_batch`');
    });

    it('appends a trailing token without "=" to the previous list value', () => {
      expect(opts.cfgFromStr('dependencies=d1,d2')).toEqual({ dependencies: ['d1', 'd2'] });
      expect(opts.cfgFromStr('dependencies=d1;d2,queue=q')).toEqual({
        dependencies: ['d1', 'd2'],
        queue: 'q',
      });
      expect(opts.cfgFromStr('dependencies=d1;d2;queue=q')).toEqual({
        dependencies: ['d1', 'd2'],
        queue: 'q',
      });
    });

    it('drops empty list items from a trailing delimiter', () => {
      expect(opts.cfgFromStr('dependencies=d1,d2,')).toEqual({ dependencies: ['d1', 'd2'] });
    });

    it('parses string maps from k:v pairs', () => {
      expect(opts.cfgFromStr('tags=team:ml;env:dev')).toEqual({ tags: { team: 'ml', env: 'dev' } });
    });

    it('drops unknown keys and reports them', () => {
      const unknown: string[] = [];
      expect(opts.cfgFromStr('nope=1,queue=q', (k) => unknown.push(k))).toEqual({ queue: 'q' });
      expect(unknown).toEqual(['nope']);
    });

    it('accepts camelCase aliases and stores the snake_case name', () => {
      expect(opts.cfgFromStr('metricDefinitions=[{"Name":"a","Regex":"b"}]')).toEqual({
        metric_definitions: [{ Name: 'a', Regex: 'b' }],
      });
    });

    it('rejects an int that is not a number, naming the option', () => {
      expect(() => opts.cfgFromStr('priority=high')).toThrow(
        'Run option: priority, must be an integer (e.g. 5), but was: high',
      );
    });

    it('rejects a literal without any key=value pair', () => {
      expect(() => opts.cfgFromStr('queue')).toThrow('`queue` does not have at least one `key=value` pair');
    });
  });

  describe('parseKeyValueLiteral', () => {
    it("follows TorchX's to_dict examples", () => {
      expect(parseKeyValueLiteral('FOO=v1')).toEqual({ FOO: 'v1' });
      expect(parseKeyValueLiteral("FOO=''")).toEqual({ FOO: '' });
      expect(parseKeyValueLiteral('FOO=v1,v2,BAR=v3')).toEqual({ FOO: 'v1,v2', BAR: 'v3' });
      expect(parseKeyValueLiteral('FOO=v1;v2;BAR=v3')).toEqual({ FOO: 'v1;v2', BAR: 'v3' });
    });

    it('rejects a middle segment that ends in a delimiter', () => {
      expect(() => parseKeyValueLiteral('FOO=v1,=v2')).toThrow(/cannot be split/);
    });
  });

  describe('format', () => {
    it("renders TorchX's usage and argument sections", () => {
      const text = new RunOpts()
        .add('queue', { type: 'str', required: true, help: 'queue to schedule job in' })
        .add('privileged', { type: 'bool', default: false, help: 'run privileged' })
        .format();
      expect(text).toBe(
        '    usage:\n        queue=QUEUE,[privileged=PRIVILEGED]\n\n    required arguments:\n' +
          '        queue=QUEUE (str)\n            queue to schedule job in\n\n    optional arguments:\n' +
          '        privileged=PRIVILEGED (bool, False)\n            run privileged',
      );
    });
  });
});
