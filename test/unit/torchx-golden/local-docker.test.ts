import { describe, expect, it } from 'vitest';
import { containerStateOf, LocalDockerScheduler } from '../../../lib/schedulers/local-docker/index.js';
import { compileFnmatch } from '../../../lib/specs/index.js';
import { appOf, asTorchxRunOpts, golden, SUFFIX } from './cases.js';

const fixture = golden<{ app_id: string; containers: unknown[] }>('local_docker');
const uniqueNamer = (name: string) => `${name}-${SUFFIX}`;
const scheduler = new LocalDockerScheduler({ sessionName: 'torchx' }, { uniqueNamer });

describe('LocalDockerScheduler', () => {
  it("declares TorchX's run options: names, types, defaults and help", () => {
    expect(asTorchxRunOpts(scheduler.runOpts())).toEqual(fixture.run_opts);
  });

  for (const c of fixture.cases) {
    it(`starts TorchX's containers: ${c.title} with ${JSON.stringify(c.cfg)}`, () => {
      const info = scheduler.submitDryrun(appOf(c), c.cfg);
      expect(info.request.appId).toBe(c.request.app_id);
      expect(JSON.parse(JSON.stringify(info.request.containers))).toEqual(c.request.containers);
    });
  }

  it('copies host variables matching copy_env, under env and the role env, but never AWS_* or TXS_*', () => {
    const withHost = new LocalDockerScheduler(
      { sessionName: 'torchx' },
      {
        uniqueNamer,
        hostEnv: {
          FOO_A: '1',
          FOO_B: '2',
          FOOBAR: 'no',
          AWS_SECRET_ACCESS_KEY: 'secret',
          TXS_TABLE_NAME: 't',
          LOG_LEVEL: 'warn',
        },
      },
    );
    const info = withHost.submitDryrun(appOf({ title: 'multi-role' }), {
      copy_env: ['FOO_*', '*', 'LOG_LEVEL'],
      env: { FOO_B: 'from-env' },
    });
    const env = info.request.containers[0]?.kwargs.environment as Record<string, string>;
    expect(env.FOO_A).toBe('1');
    expect(env.FOO_B).toBe('from-env');
    expect(env.LOG_LEVEL).toBe('debug');
    expect(env).not.toHaveProperty('AWS_SECRET_ACCESS_KEY');
    expect(env).not.toHaveProperty('TXS_TABLE_NAME');
    expect(JSON.stringify(info.request)).not.toContain('secret');
  });

  it('copies nothing when it was given no host environment (the default)', () => {
    const info = scheduler.submitDryrun(appOf({ title: 'utils.echo' }), { copy_env: ['*'] });
    expect(Object.keys(info.request.containers[0]?.kwargs.environment as object)).toEqual([
      'TORCHX_RANK0_HOST',
    ]);
  });

  it('matches copy_env patterns as Python fnmatch', () => {
    expect(compileFnmatch('FOO_?')('FOO_A')).toBe(true);
    expect(compileFnmatch('FOO_?')('FOO_AB')).toBe(false);
    expect(compileFnmatch('[!A]*')('BAR')).toBe(true);
    expect(compileFnmatch('[!A]*')('ABC')).toBe(false);
    expect(compileFnmatch('a.b')('axb')).toBe(false);
    expect(compileFnmatch('[x')('[x')).toBe(true);
  });

  it('refuses to run before anything is recorded, pointing to local_cwd', async () => {
    const info = scheduler.submitDryrun(appOf({ title: 'utils.echo' }), {});
    expect(() => scheduler.appIdOf(info)).toThrow(/local_docker supports dry runs only.*local_cwd/);
  });
});

describe('containerStateOf', () => {
  it('maps Docker statuses as TorchX: exited by exit code, others by CONTAINER_STATE, unknown as UNKNOWN', () => {
    expect(containerStateOf('exited', 0)).toBe('SUCCEEDED');
    expect(containerStateOf('exited', 137)).toBe('FAILED');
    expect(containerStateOf('exited')).toBe('FAILED');
    expect(containerStateOf('created')).toBe('SUBMITTED');
    expect(containerStateOf('paused')).toBe('PENDING');
    expect(containerStateOf('dead')).toBe('FAILED');
    expect(containerStateOf('__proto__')).toBe('UNKNOWN');
  });
});
