import { describe, expect, it } from 'vitest';
import { LsfScheduler, lsfStateOf } from '../../../lib/schedulers/lsf/index.js';
import { appOf, asTorchxRunOpts, golden, SUFFIX } from './cases.js';

interface LsfGolden {
  app_id: string;
  cmd: string[];
  script: string;
}

const fixture = golden<LsfGolden>('lsf');
const scheduler = new LsfScheduler({ sessionName: 'torchx' }, { uniqueNamer: (name) => `${name}-${SUFFIX}` });

describe('LsfScheduler', () => {
  it("declares TorchX's run options: names, types, defaults and help", () => {
    expect(asTorchxRunOpts(scheduler.runOpts())).toEqual(fixture.run_opts);
  });

  for (const c of fixture.cases) {
    it(`writes TorchX's bsub script byte for byte: ${c.title} with ${JSON.stringify(c.cfg)}`, () => {
      const app = appOf(c);
      const info = scheduler.submitDryrun(app, c.cfg);
      expect(info.request.script).toBe(c.request.script);
      expect(info.request.appId).toBe(c.request.app_id);
      expect(info.request.cmd).toEqual(c.request.cmd);
      expect(info.format()).toContain(c.request.script);
    });
  }

  it('leaves the app it translates unchanged', () => {
    const app = appOf({ title: 'multi-role' });
    const before = structuredClone(app);
    scheduler.submitDryrun(app, {});
    expect(app).toEqual(before);
  });

  it('refuses to run, before anything is recorded, and says how to submit the script', async () => {
    const info = scheduler.submitDryrun(appOf({ title: 'utils.echo' }));
    expect(() => scheduler.appIdOf(info)).toThrow(/dry runs only.*bsub.*login node/);
    await expect(scheduler.schedule(info)).rejects.toMatchObject({ code: 'NotSupported' });
    await expect(scheduler.describe('x')).rejects.toMatchObject({ code: 'NotSupported' });
    await expect(scheduler.list()).resolves.toEqual([]);
  });
});

describe('lsfStateOf', () => {
  it("maps bjobs states as TorchX's JOB_STATE, EXIT 130 (SIGINT) as CANCELLED and anything else as UNKNOWN", () => {
    expect(lsfStateOf('PEND', '-')).toBe('PENDING');
    expect(lsfStateOf('RUN', '-')).toBe('RUNNING');
    expect(lsfStateOf('USUSP', '-')).toBe('PENDING');
    expect(lsfStateOf('DONE', '0')).toBe('SUCCEEDED');
    expect(lsfStateOf('EXIT', '1')).toBe('FAILED');
    expect(lsfStateOf('EXIT', '130')).toBe('CANCELLED');
    expect(lsfStateOf('ZOMBI', '-')).toBe('UNKNOWN');
    expect(lsfStateOf('constructor', '-')).toBe('UNKNOWN');
  });
});
