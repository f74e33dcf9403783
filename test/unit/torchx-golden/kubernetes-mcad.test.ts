import { describe, expect, it } from 'vitest';
import {
  KubernetesMcadScheduler,
  mcadCleanupStr,
  mcadUniqueAppId,
  servicePort,
} from '../../../lib/schedulers/kubernetes-mcad/index.js';
import { makeAppDef, randomIdOfLength } from '../../../lib/specs/index.js';
import { appOf, asTorchxRunOpts, golden, LEN_ALPHABET } from './cases.js';

const fixture = golden<{ resource: unknown }>('kubernetes_mcad');
const namer = (name: string, length: number) => `${name}-${LEN_ALPHABET.slice(0, length)}`;
const scheduler = new KubernetesMcadScheduler({ sessionName: 'torchx' }, { uniqueNamer: namer });

describe('KubernetesMcadScheduler', () => {
  it("declares TorchX's run options: names, types, defaults and help", () => {
    expect(asTorchxRunOpts(scheduler.runOpts())).toEqual(fixture.run_opts);
  });

  for (const c of fixture.cases) {
    it(`creates TorchX's AppWrapper: ${c.title} with ${JSON.stringify(c.cfg)}`, () => {
      const info = scheduler.submitDryrun(appOf(c), c.cfg);
      expect(JSON.parse(JSON.stringify(info.request.resource))).toEqual(c.request.resource);
    });
  }

  it('shortens the random part for long names and cuts names that leave fewer than 4 characters for it', () => {
    const roles = appOf({ title: 'utils.echo' }).roles;
    const long = makeAppDef({ name: 'a'.repeat(50), roles });
    expect(mcadUniqueAppId(long, namer).appId).toBe(`${'a'.repeat(50)}-${LEN_ALPHABET.slice(0, 5)}`);
    const tooLong = makeAppDef({ name: 'b'.repeat(70), roles });
    const cut = mcadUniqueAppId(tooLong, namer);
    expect(cut.appName).toBe('b'.repeat(55));
    expect(cut.appId.length).toBeLessThanOrEqual(59);
    const info = scheduler.submitDryrun(tooLong, {});
    expect(info.app.name).toBe('b'.repeat(55));
    expect(tooLong.name).toBe('b'.repeat(70));
  });

  it('serves on the last declared port, falling back to 29500 for none or an out-of-range one', () => {
    expect(servicePort(appOf({ title: 'multi-role' }))).toBe(8080);
    expect(servicePort(appOf({ title: 'utils.echo' }))).toBe(29500);
    const bad = appOf({ title: 'utils.echo' });
    (bad.roles[0] as { portMap: Record<string, number> }).portMap = { x: 70000 };
    expect(servicePort(bad)).toBe(29500);
  });

  it('cleans names as TorchX (lower case, [a-z0-9-], no leading digits)', () => {
    expect(mcadCleanupStr('-42Train_er.x')).toBe('trainerx');
  });

  it('draws random ids of exactly the asked length from the consonant-first alphabet', () => {
    const id = randomIdOfLength(14);
    expect(id).toMatch(/^[bcdfghj-np-tv-xz][bcdfghj-np-tv-xz0-79]{13}$/);
    expect(randomIdOfLength(0)).toBe('');
  });

  it('refuses to run before anything is recorded', async () => {
    const info = scheduler.submitDryrun(appOf({ title: 'utils.echo' }), {});
    expect(() => scheduler.appIdOf(info)).toThrow(/kubernetes_mcad supports dry runs only/);
  });
});
