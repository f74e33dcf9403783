import { describe, expect, it } from 'vitest';
import {
  escapeUnsafeCharacters,
  INSTANCE_TYPE_CAPABILITY,
  MAX_REPLICAS,
  parseAppDef,
  parseCfg,
  parseRunRequest,
  UNSAFE_NAME_MESSAGE,
  ValidationError,
} from '../../../lib/specs/index.js';

function issuesOf(fn: () => unknown) {
  try {
    fn();
  } catch (e) {
    if (e instanceof ValidationError) return e.issues;
    throw e;
  }
  throw new Error('expected a ValidationError');
}

const minimalRole = { name: 'echo', image: 'alpine', entrypoint: 'echo' };

describe('parseAppDef', () => {
  it('applies TorchX defaults', () => {
    const app = parseAppDef({ name: 'hello', roles: [minimalRole] });
    expect(app).toEqual({
      name: 'hello',
      metadata: {},
      roles: [
        {
          name: 'echo',
          image: 'alpine',
          entrypoint: 'echo',
          args: [],
          env: {},
          numReplicas: 1,
          maxRetries: 0,
          retryPolicy: 'APPLICATION',
          resource: { cpu: -1, gpu: -1, memMB: -1, capabilities: {}, devices: {} },
          portMap: {},
          metadata: {},
          mounts: [],
        },
      ],
    });
  });

  it('resolves a named-resource string', () => {
    const app = parseAppDef({ name: 'x', roles: [{ ...minimalRole, resource: 'aws_g5.xlarge' }] });
    expect(app.roles[0]?.resource).toMatchObject({
      cpu: 4,
      gpu: 1,
      capabilities: { [INSTANCE_TYPE_CAPABILITY]: 'g5.xlarge' },
    });
  });

  it('names an unknown named resource with suggestions', () => {
    expect(
      issuesOf(() => parseAppDef({ name: 'x', roles: [{ ...minimalRole, resource: 'aws_g5.xlarg' }] })),
    ).toEqual([
      { path: 'app.roles.0.resource', message: expect.stringContaining('Did you mean: aws_g5.xlarge') },
    ]);
  });

  it('parses tagged mounts with defaults', () => {
    const app = parseAppDef({
      name: 'x',
      roles: [
        {
          ...minimalRole,
          mounts: [
            { type: 'bind', srcPath: '/a', dstPath: '/b' },
            { type: 'volume', src: 'fs-1', dstPath: '/efs', readOnly: true },
            { type: 'device', srcPath: '/dev/fuse' },
          ],
        },
      ],
    });
    expect(app.roles[0]?.mounts).toEqual([
      { type: 'bind', srcPath: '/a', dstPath: '/b', readOnly: false },
      { type: 'volume', src: 'fs-1', dstPath: '/efs', readOnly: true },
      { type: 'device', srcPath: '/dev/fuse', dstPath: '/dev/fuse', permissions: 'rwm' },
    ]);
  });

  it.each([
    [{ name: 'x', roles: [] }, 'app.roles', 'an app needs at least one role'],
    [
      { name: 'x', roles: [{ ...minimalRole, numReplicas: 0 }] },
      'app.roles.0.numReplicas',
      'must be at least 1',
    ],
    [
      { name: 'x', roles: [{ ...minimalRole, numReplicas: '2' }] },
      'app.roles.0.numReplicas',
      'must be a number, got string "2"',
    ],
    [
      { name: 'x', roles: [{ name: 'r', image: 'i' }] },
      'app.roles.0.entrypoint',
      'is required (expected string)',
    ],
    [
      { name: 'x', roles: [{ ...minimalRole, num_replicas: 2 }] },
      'app.roles.0.num_replicas',
      "unknown field 'num_replicas'; did you mean 'numReplicas'?",
    ],
    [
      { name: 'x', roles: [{ ...minimalRole, env: { A: 1 } }] },
      'app.roles.0.env.A',
      'must be a string, got number 1',
    ],
    [
      { name: 'x', roles: [{ ...minimalRole, mounts: [{ type: 'tmpfs' }] }] },
      'app.roles.0.mounts.0.type',
      'must be one of "bind", "volume" or "device"',
    ],
    [
      { name: 'x', roles: [{ ...minimalRole, resource: 5 }] },
      'app.roles.0.resource',
      'must be a named resource such as "aws_g5.xlarge" or an object {cpu, gpu, memMB}',
    ],
    [
      { name: 'x', roles: [minimalRole, minimalRole] },
      'app.roles.1.name',
      "role name 'echo' is used twice; role names must be unique",
    ],
  ])('rejects %j naming %s', (input, path, message) => {
    expect(issuesOf(() => parseAppDef(input))).toContainEqual({ path, message });
  });

  it('rejects prototype-pollution keys and over-deep metadata', () => {
    const polluted = JSON.parse(
      '{"name":"x","roles":[{"name":"r","image":"i","entrypoint":"e","env":{"__proto__":"x"}}]}',
    );
    expect(issuesOf(() => parseAppDef(polluted))[0]?.path).toBe('app.roles.0.env.__proto__');
    let deep: unknown = 'leaf';
    for (let i = 0; i < 20; i++) deep = { d: deep };
    expect(
      issuesOf(() => parseAppDef({ name: 'x', roles: [{ ...minimalRole, metadata: { deep } }] }))[0]?.path,
    ).toBe('app.roles.0.metadata.deep');
  });
});

describe('parseRunRequest', () => {
  it('accepts a component request and defaults cfg and args', () => {
    expect(parseRunRequest({ scheduler: 'local_cwd', component: 'utils.echo' })).toEqual({
      scheduler: 'local_cwd',
      cfg: {},
      component: 'utils.echo',
      args: [],
    });
  });

  it('accepts an AppDef request with cfg and session', () => {
    const req = parseRunRequest({
      scheduler: 'aws_batch',
      session: 's1',
      cfg: { queue: 'q' },
      app: { name: 'a', roles: [minimalRole] },
    });
    expect(req.app?.roles[0]?.name).toBe('echo');
    expect(req).toMatchObject({ scheduler: 'aws_batch', session: 's1', cfg: { queue: 'q' } });
  });

  it.each([
    [null, 'body'],
    [[], 'body'],
    [{ scheduler: 'x' }, 'app'],
    [{ component: 'utils.echo' }, 'scheduler'],
    [{ scheduler: 'x', component: 'c', app: { name: 'a', roles: [minimalRole] } }, 'component'],
    [{ scheduler: 'x', app: { name: 'a', roles: [minimalRole] }, args: ['a'] }, 'args'],
    [{ scheduler: 'x', component: 'c', cfg: { q: { nested: { deep: 1 } } } }, 'cfg.q'],
    [{ scheduler: 'x', component: 'c', session: 'bad session!' }, 'session'],
    [{ scheduler: 'x', component: 'c', extra: 1 }, 'extra'],
  ])('rejects %j naming %s', (input, path) => {
    expect(issuesOf(() => parseRunRequest(input)).map((i) => i.path)).toContain(path);
  });

  it('summarises the first problem in the message', () => {
    expect(() => parseRunRequest({ component: 'c' })).toThrow(
      'Invalid request: scheduler: is required (expected string)',
    );
  });
});

describe('parseCfg', () => {
  it('accepts every run option value shape', () => {
    const cfg = { a: 's', b: 1, c: true, d: null, e: ['x'], f: { k: 'v' }, g: [{ Key: 'k', Value: 'v' }] };
    expect(parseCfg(cfg)).toEqual(cfg);
  });
});

describe('parseAppDef string hygiene and precise resource errors', () => {
  it('names the field inside a resource object', () => {
    expect(
      issuesOf(() =>
        parseAppDef({ name: 'x', roles: [{ ...minimalRole, resource: { cpu: 1, gpu: 0, memMB: '1G' } }] }),
      ),
    ).toEqual([{ path: 'app.roles.0.resource.memMB', message: 'must be a number, got string "1G"' }]);
    expect(
      issuesOf(() => parseAppDef({ name: 'x', roles: [{ ...minimalRole, resource: { cpu: 1, gpu: 0 } }] })),
    ).toEqual([{ path: 'app.roles.0.resource.memMB', message: 'is required (expected number)' }]);
  });

  it('rejects control characters in names and lone surrogates anywhere', () => {
    expect(issuesOf(() => parseAppDef({ name: 'a\nb', roles: [minimalRole] }))).toEqual([
      { path: 'app.name', message: UNSAFE_NAME_MESSAGE },
    ]);
    const lone = JSON.parse(
      '{"name":"x","roles":[{"name":"r","image":"i","entrypoint":"e","args":["\\ud800"]}]}',
    );
    expect(issuesOf(() => parseAppDef(lone))).toEqual([
      { path: 'app.roles.0.args.0', message: 'contains invalid Unicode (a lone surrogate)' },
    ]);
  });

  it.each([
    ['a right-to-left override (U+202E)', 'train\u202Egnp.exe'],
    ['a left-to-right embedding (U+202A)', '\u202Atrain'],
    ['a first-strong isolate (U+2068)', 'train\u2068x\u2069'],
    ['a zero-width space (U+200B)', 'tra\u200Bin'],
    ['a zero-width joiner (U+200D)', 'tra\u200Din'],
    ['a byte-order mark (U+FEFF)', '\uFEFFtrain'],
    ['a line separator (U+2028)', 'tra\u2028in'],
    ['an escape sequence (ESC, U+001B)', 'train\u001b[2J'],
    ['a C1 control (U+009B)', 'train\u009b2J'],
  ])('rejects %s in app, role, key and image names', (_what, bad) => {
    const role = { ...minimalRole, name: bad, image: bad, env: { [bad]: 'v' }, metadata: { [bad]: 1 } };
    const issues = issuesOf(() => parseAppDef({ name: bad, roles: [role] }));
    const shown = escapeUnsafeCharacters(bad); // a bad key is named in the path, escaped
    expect(shown).not.toBe(bad);
    expect(issues.map((i) => i.path).sort()).toEqual(
      [
        'app.name',
        `app.roles.0.env.${shown}`,
        'app.roles.0.image',
        `app.roles.0.metadata.${shown}`,
        'app.roles.0.name',
      ].sort(),
    );
    expect(issues.every((i) => i.message === UNSAFE_NAME_MESSAGE)).toBe(true);
  });

  it('accepts visible non-ASCII names (accents, CJK, emoji without joiners)', () => {
    expect(parseAppDef({ name: 'entraînement-训练-🙂', roles: [minimalRole] }).name).toBe(
      'entraînement-训练-🙂',
    );
  });

  it('keeps newlines in args (multi-line python -c programs)', () => {
    expect(
      parseAppDef({ name: 'x', roles: [{ ...minimalRole, args: ['-c', 'print(1)\nprint(2)'] }] }).roles[0]
        ?.args[1],
    ).toBe('print(1)\nprint(2)');
  });
});

describe('numbers in a request', () => {
  const role = (extra: Record<string, unknown>) => ({ ...minimalRole, ...extra });
  const request = (app: Record<string, unknown>, cfg: Record<string, unknown> = {}) => ({
    scheduler: 'local_cwd',
    cfg,
    app: { name: 'n', roles: [app] },
  });

  it.each([
    ['an unknown cfg key', request(minimalRole, { surprise: 1e300 }), 'cfg.surprise'],
    ['a tiny cfg value', request(minimalRole, { surprise: -1e-300 }), 'cfg.surprise'],
    [
      'nested role metadata',
      request(role({ metadata: { a: { b: [1, 1e-300] } } })),
      'app.roles.0.metadata.a.b.1',
    ],
    [
      'resource cpu',
      request(role({ resource: { cpu: 1e300, gpu: 0, memMB: 1 } })),
      'app.roles.0.resource.cpu',
    ],
    [
      'a capability',
      request(role({ resource: { cpu: 1, gpu: 0, memMB: 1, capabilities: { x: 1e-131 } } })),
      'app.roles.0.resource.capabilities.x',
    ],
  ])('refuses a number DynamoDB cannot hold in %s, naming the field', (_where, body, path) => {
    const issues = issuesOf(() => parseRunRequest(body));
    expect(issues).toEqual([{ path, message: expect.stringMatching(/^must be 0 or a number of magnitude/) }]);
    expect(issues[0]?.message).toContain('as a string');
  });

  it('keeps 0, fractions and the edges of the range', () => {
    const parsed = parseRunRequest(
      request(role({ metadata: { z: 0, f: 0.25, lo: 1e-130, hi: 9.99e125, n: -3 } }), { k: 1e125 }),
    );
    expect(parsed.cfg.k).toBe(1e125);
    expect(parsed.app?.roles[0]?.metadata).toEqual({ z: 0, f: 0.25, lo: 1e-130, hi: 9.99e125, n: -3 });
  });

  it('refuses more replicas than MAX_REPLICAS', () => {
    expect(issuesOf(() => parseRunRequest(request(role({ numReplicas: MAX_REPLICAS + 1 }))))).toEqual([
      { path: 'app.roles.0.numReplicas', message: expect.stringContaining(String(MAX_REPLICAS)) },
    ]);
  });
});
