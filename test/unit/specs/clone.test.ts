import { describe, expect, it } from 'vitest';
import { cloneAppDef, clonePlain, makeAppDef, makeResource, makeRole } from '../../../lib/specs/index.js';

describe('clonePlain', () => {
  it('copies JSON-like data deeply, in the same key order, equal to structuredClone', () => {
    const value = { b: [1, 'two', { c: null, d: [true] }], a: { nested: { x: 'y' } }, u: undefined, 2: 'n' };
    const copy = clonePlain(value);
    expect(copy).toStrictEqual(structuredClone(value));
    expect(Object.keys(copy)).toEqual(Object.keys(value));
    copy.a.nested.x = 'changed';
    (copy.b[2] as { d: boolean[] }).d.push(false);
    expect(value.a.nested.x).toBe('y');
    expect((value.b[2] as { d: boolean[] }).d).toEqual([true]);
  });

  it('keeps an own __proto__ key as an own key, as structuredClone does, without changing the prototype', () => {
    const value = JSON.parse('{"__proto__": {"polluted": true}, "k": 1}') as Record<string, unknown>;
    const copy = clonePlain(value);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(Object.keys(copy)).toEqual(['__proto__', 'k']);
    expect(copy).toStrictEqual(structuredClone(value));
  });

  it('hands values that are not plain data, and cycles, to structuredClone', () => {
    const date = new Date(0);
    const copy = clonePlain({ when: date, map: new Map([['a', 1]]) });
    expect(copy.when).toEqual(date);
    expect(copy.when).not.toBe(date);
    expect(copy.map.get('a')).toBe(1);
    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic.self = cyclic;
    const cycleCopy = clonePlain(cyclic);
    expect(cycleCopy.self).toBe(cycleCopy);
  });
});

describe('cloneAppDef', () => {
  it('returns an AppDef that shares nothing with the original', () => {
    const app = makeAppDef({
      name: 'train',
      roles: [
        makeRole({
          name: 'trainer',
          image: 'img',
          args: ['a'],
          env: { K: 'v' },
          resource: makeResource({ cpu: 1, gpu: 0, memMB: 1024, devices: { d: 1 } }),
          metadata: { nested: { list: [1] } },
        }),
      ],
      metadata: { team: 'ml' },
    });
    const copy = cloneAppDef(app);
    expect(copy).toStrictEqual(app);
    const role = copy.roles[0];
    if (role === undefined) throw new Error('the copy has no role');
    role.args.push('b');
    role.env.K = 'changed';
    role.resource.devices.d = 2;
    (role.metadata.nested as { list: number[] }).list.push(2);
    copy.metadata.team = 'other';
    expect(app.roles[0]?.args).toEqual(['a']);
    expect(app.roles[0]?.env.K).toBe('v');
    expect(app.roles[0]?.resource.devices.d).toBe(1);
    expect(app.roles[0]?.metadata.nested).toEqual({ list: [1] });
    expect(app.metadata.team).toBe('ml');
  });
});
