/**
 * Reliability: thousands of generated bad request bodies (wrong types, missing fields, huge strings, unicode,
 * prototype-pollution keys, deep nesting, truncated JSON) through the run and dryrun handlers: every one is
 * a 4xx that names the problem, never a 5xx, and nothing is written or submitted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FunctionsEnvironment, startFunctionsEnvironment } from './helpers/environment.js';
import { seededRandom } from './helpers/fake-aws.js';
import { invoke } from './helpers/lambda.js';

let env: FunctionsEnvironment;
beforeAll(async () => {
  env = await startFunctionsEnvironment();
});
afterAll(() => env.close());

const VALID_APP = {
  scheduler: 'aws_batch',
  cfg: { queue: 'ml-gpu-queue' },
  app: {
    name: 'trainer',
    roles: [
      {
        name: 'trainer',
        image: 'ghcr.io/pytorch/torchx:0.8',
        entrypoint: 'python',
        args: ['train.py'],
        numReplicas: 2,
        resource: { cpu: 4, gpu: 0, memMB: 8192 },
      },
    ],
  },
};

const HUGE = 'x'.repeat(70_000);
const HUGE_UNICODE = '🙂\u0301'.repeat(30_000);
/** Values of the wrong type (or over a limit) for each kind of field. */
const WRONG: Record<'string' | 'count' | 'object' | 'array', unknown[]> = {
  string: [null, true, -1, 1.5, [], {}, ['a'], HUGE, HUGE_UNICODE],
  count: [null, 'lots', '2', true, -1, 1.5, [], {}, Number.NaN],
  object: ['x', 5, true, [], [1, 2], { key: 5 }, { key: ['a'] }],
  array: ['x', 5, true, {}, [null], [[['deep']]], [{ __proto__: 1 }]],
};
function deep(depth: number): unknown {
  let value: unknown = 'leaf';
  for (let i = 0; i < depth; i++) value = { nested: value };
  return value;
}

/** Sets `path` (dot-separated) in a deep copy of `base` to `value` (or deletes it). */
function mutate(base: unknown, path: string[], value: unknown, remove: boolean): unknown {
  const copy = JSON.parse(JSON.stringify(base)) as Record<string, unknown>;
  let node: Record<string, unknown> = copy;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string, unknown>;
  const last = path[path.length - 1] as string;
  if (remove) delete node[last];
  else node[last] = value;
  return copy;
}

const PATHS: { path: string[]; kind: keyof typeof WRONG }[] = [
  { path: ['scheduler'], kind: 'string' },
  { path: ['cfg'], kind: 'object' },
  { path: ['cfg', 'queue'], kind: 'string' },
  { path: ['app'], kind: 'object' },
  { path: ['app', 'name'], kind: 'string' },
  { path: ['app', 'roles'], kind: 'array' },
  { path: ['app', 'roles', '0'], kind: 'object' },
  { path: ['app', 'roles', '0', 'name'], kind: 'string' },
  { path: ['app', 'roles', '0', 'image'], kind: 'string' },
  { path: ['app', 'roles', '0', 'entrypoint'], kind: 'string' },
  { path: ['app', 'roles', '0', 'args'], kind: 'array' },
  { path: ['app', 'roles', '0', 'numReplicas'], kind: 'count' },
  { path: ['app', 'roles', '0', 'resource', 'memMB'], kind: 'count' },
  { path: ['app', 'roles', '0', 'env'], kind: 'object' },
];
const REQUIRED = new Set(['scheduler', 'app.name', 'app.roles.0.name', 'app.roles.0.image', 'cfg.queue']);

/** Generated bad bodies (raw strings), each with what makes it bad. */
function badBodies(count: number, seed: number): { raw: string; why: string }[] {
  const random = seededRandom(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const out: { raw: string; why: string }[] = [];
  while (out.length < count) {
    const kind = Math.floor(random() * 5);
    const { path, kind: fieldKind } = pick(PATHS);
    if (kind === 0 && REQUIRED.has(path.join('.'))) {
      out.push({
        raw: JSON.stringify(mutate(VALID_APP, path, undefined, true)),
        why: `missing ${path.join('.')}`,
      });
    } else if (kind <= 1) {
      const value = pick(WRONG[fieldKind]);
      const body = mutate(VALID_APP, path, value, false);
      const raw = JSON.stringify(body);
      if (raw === JSON.stringify(VALID_APP)) continue;
      out.push({ raw, why: `${path.join('.')} = ${JSON.stringify(value)?.slice(0, 40)}` });
    } else if (kind === 2) {
      const raw = JSON.stringify(VALID_APP);
      out.push({ raw: raw.slice(0, Math.floor(random() * (raw.length - 1))), why: 'truncated JSON' });
    } else if (kind === 3) {
      const key = pick(['__proto__', 'constructor', 'prototype']);
      const raw = JSON.stringify(VALID_APP).replace('"env"', `"${key}"`).replace('"memMB"', `"${key}"`);
      const polluted = raw.replace('"trainer","image"', `"trainer","${key}":{"x":1},"image"`);
      out.push({ raw: polluted, why: `prototype key ${key}` });
    } else {
      out.push({
        raw: JSON.stringify(
          mutate(VALID_APP, ['app', 'roles', '0', 'metadata'], deep(20 + Math.floor(random() * 200)), false),
        ),
        why: 'deep nesting',
      });
    }
  }
  return out;
}

describe('generated bad request bodies', () => {
  it('the valid body passes dryrun (the mutations below break exactly one thing)', async () => {
    const reply = await invoke(env.api.Dryrun, { method: 'POST', resource: '/v1/dryrun', body: VALID_APP });
    expect(reply.statusCode).toBe(200);
  });

  it('answers 3,000 of them on run and dryrun with a 4xx naming the problem, and writes nothing', async () => {
    env.aws.takeCalls();
    env.takeDynamoCalls();
    const bodies = badBodies(1500, 7);
    const failures: string[] = [];
    for (const [i, { raw, why }] of bodies.entries()) {
      for (const [route, resource] of [
        ['Run', '/v1/apps'],
        ['Dryrun', '/v1/dryrun'],
      ] as const) {
        const reply = await invoke(env.api[route], {
          method: 'POST',
          resource,
          raw,
          headers: { 'Content-Type': 'application/json' },
        });
        const error = reply.body.error as
          | { code?: string; message?: string; details?: unknown[] }
          | undefined;
        const ok =
          reply.statusCode >= 400 &&
          reply.statusCode < 500 &&
          typeof error?.code === 'string' &&
          typeof error.message === 'string' &&
          error.message.length > 10;
        if (!ok)
          failures.push(
            `#${i} ${route} ${why}: ${reply.statusCode} ${JSON.stringify(reply.body).slice(0, 200)}`,
          );
      }
    }
    expect(failures.slice(0, 10)).toEqual([]);
    expect(env.aws.takeCalls()).toEqual({});
    const writes = Object.entries(env.takeDynamoCalls()).filter(([name]) => !/^(Get|Query)/.test(name));
    expect(writes).toEqual([]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('names the field: a string memMB is reported under app.roles.0.resource', async () => {
    const reply = await invoke(env.api.Run, {
      method: 'POST',
      resource: '/v1/apps',
      body: mutate(VALID_APP, ['app', 'roles', '0', 'resource', 'memMB'], 'lots', false),
    });
    expect(reply.statusCode).toBe(400);
    const details = (reply.body.error as { details: { path: string }[] }).details;
    expect(details.map((d) => d.path).join(' ')).toMatch(/^app\.roles\.0\.resource/);
  });
});
