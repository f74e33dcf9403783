/** The synchronous bundling the construct runs at synth time from a clone (rolldown in a child node). */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { BundlingError, bundleFunction } from '../../../cdk/constructs/lambda-bundling.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'txs-bundling-'));
  dirs.push(dir);
  return dir;
};

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('bundleFunction', () => {
  it('writes index.mjs, re-exporting the handler from the chunk of what its import needs', () => {
    const out = tempDir();
    bundleFunction(ROOT, 'functions/api/openapi.ts', out);
    const index = readFileSync(path.join(out, 'index.mjs'), 'utf8');
    const initial = /from\s*"\.\/(chunks\/initial-[\w-]+\.mjs)"/.exec(index)?.[1];
    expect(index).toMatch(/\bexport\s*\{[^}]*\bhandler\b[^}]*\}/);
    expect(initial).toBeDefined();
    expect(existsSync(path.join(out, `${initial}.map`))).toBe(true);
    // Source maps without the sources.
    expect(JSON.parse(readFileSync(path.join(out, `${initial}.map`), 'utf8')).sourcesContent).toBeUndefined();
  });

  it('refuses a project without rolldown, saying how to get it, and writes nothing', () => {
    const project = tempDir();
    const out = path.join(project, 'out');
    expect(() => bundleFunction(project, 'functions/api/openapi.ts', out)).toThrow(BundlingError);
    expect(() => bundleFunction(project, 'functions/api/openapi.ts', out)).toThrow(
      /no rolldown in .*npm ci/s,
    );
    expect(existsSync(out)).toBe(false);
  });

  it("reports a failed build with rolldown's reason and the entry", () => {
    const out = tempDir();
    expect(() => bundleFunction(ROOT, 'functions/api/no-such-route.ts', out)).toThrow(
      /cannot bundle functions\/api\/no-such-route\.ts: .*no-such-route/s,
    );
  });
});
