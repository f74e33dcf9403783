/**
 * Golden scripts: for TorchX's builtin components and multi-role AppDefs, the dry run's `script` equals the
 * script TorchX 0.8.0dev0 itself writes, byte for byte. The fixtures and the generator that wrote them with
 * TorchX's own code are in test/fixtures/slurm/ (`generate.py`, `cases.json`).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { materializeComponent } from '../../../lib/components/index.js';
import type { SlurmRequest } from '../../../lib/schedulers/slurm/index.js';
import {
  type AppDef,
  type Cfg,
  makeAppDef,
  makeResource,
  makeRole,
  NULL_RESOURCE,
} from '../../../lib/specs/index.js';
import { slurmScheduler } from './helpers.js';

const FIXTURES = join(import.meta.dirname, '../../fixtures/slurm');

interface JsonRole {
  name: string;
  image?: string;
  entrypoint: string;
  args?: string[];
  env?: Record<string, string>;
  num_replicas?: number;
  max_retries?: number;
  resource: { cpu: number; gpu: number; memMB: number } | null;
}

interface GoldenCase {
  id: string;
  component?: string;
  args?: string[];
  app?: { name: string; roles: JsonRole[] };
  cfg?: Cfg;
}

const cases = JSON.parse(readFileSync(join(FIXTURES, 'cases.json'), 'utf8')) as GoldenCase[];

function appOf(c: GoldenCase): AppDef {
  if (c.component !== undefined) return materializeComponent(c.component, c.args ?? []);
  const app = c.app as NonNullable<GoldenCase['app']>;
  return makeAppDef({
    name: app.name,
    roles: app.roles.map((r) =>
      makeRole({
        name: r.name,
        image: r.image ?? '',
        entrypoint: r.entrypoint,
        args: r.args ?? [],
        env: r.env ?? {},
        numReplicas: r.num_replicas ?? 1,
        maxRetries: r.max_retries ?? 0,
        resource: r.resource ? makeResource(r.resource) : { ...NULL_RESOURCE },
      }),
    ),
  });
}

describe('SlurmScheduler dry run (golden, against TorchX 0.8.0dev0)', () => {
  it('covers builtin components, several roles, every run option and a role without resource', () => {
    expect(cases.map((c) => c.id)).toEqual(
      expect.arrayContaining([
        'utils-echo',
        'utils-sh',
        'dist-ddp-2x2',
        'dist-spmd',
        'multi-role',
        'no-resource',
      ]),
    );
  });

  for (const c of cases) {
    it(`writes TorchX's sbatch script for ${c.id}`, () => {
      const { scheduler } = slurmScheduler();
      const info = scheduler.submitDryrun(appOf(c), c.cfg ?? {});
      const expected = readFileSync(join(FIXTURES, `${c.id}.sbatch`), 'utf8');
      const request = info.request as SlurmRequest;
      expect(request.script).toBe(expected);
      expect(request.slurmrestd.body.script).toBe(expected);
    });
  }
});
