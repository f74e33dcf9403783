/**
 * Builds the real Lambda bundles once (local rolldown, as `cdk synth` does) and checks each one is an ES
 * module that exports `handler`. Reports each bundle's size (console, and bench/results/bundles.json, which git ignores: the committed figures are in bench/results/latest.json); sizes
 * are measurements, never asserted.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Asset } from 'aws-cdk-lib/aws-s3-assets';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FUNCTIONS } from '../../../functions/routes.js';
import { buildStack } from './synth.js';

const BUNDLE_TIMEOUT_MS = 300_000;
const RESULTS = new URL('../../../bench/results/bundles.json', import.meta.url);

let outdir: string;
let bundles: Map<string, string>;

beforeAll(() => {
  outdir = mkdtempSync(path.join(tmpdir(), 'txs-bundles-'));
  const { app, stack } = buildStack({}, { bundle: true, outdir });
  app.synth();
  bundles = new Map(
    Object.entries(stack.txs.functions).map(([name, fn]) => {
      const asset = fn.node.findChild('Code') as Asset;
      return [name, path.join(outdir, asset.assetPath, 'index.mjs')];
    }),
  );
}, BUNDLE_TIMEOUT_MS);

/** The files importing `file` loads: it and the files it imports statically, transitively (minified ESM). */
function importedFiles(file: string): string[] {
  const seen = new Set<string>();
  const stack = [file];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    if (seen.has(next)) continue;
    seen.add(next);
    const code = readFileSync(next, 'utf8');
    for (const m of code.matchAll(/(?:\bfrom\s*|\bimport\s*)["'](\.{1,2}\/[^"']+)["']/g)) {
      stack.push(path.resolve(path.dirname(next), m[1] as string));
    }
  }
  return [...seen];
}

afterAll(() => {
  if (outdir !== undefined) rmSync(outdir, { recursive: true, force: true });
});

describe('Lambda bundles (real rolldown bundling)', () => {
  it('writes one ESM bundle with source maps per function, each from its own handler', () => {
    expect([...bundles.keys()]).toEqual(FUNCTIONS.map((f) => f.name));
    // One asset per function (CDK caches staged assets by their bundling options).
    expect(new Set(bundles.values()).size).toBe(FUNCTIONS.length);
    for (const [name, file] of bundles) {
      expect(existsSync(file), name).toBe(true);
      // An ES module: it declares its exports (a CommonJS bundle would assign module.exports).
      expect(readFileSync(file, 'utf8'), name).toMatch(/\bexport\s*\{[^}]*\bhandler\b[^}]*\}/);
      // index.mjs re-exports the handler from the chunk of what the import loads, which has its map.
      const initial = importedFiles(file).filter((f) => /\/chunks\/initial-[\w-]+\.mjs$/.test(f));
      expect(initial, name).toHaveLength(1);
      expect(existsSync(`${initial[0]}.map`), name).toBe(true);
    }
  });

  it('loads every bundle as an ES module in plain Node.js and finds a handler function', () => {
    const files = JSON.stringify([...bundles.values()].map((file) => `file://${file}`));
    const script = `for (const f of ${files}) { const m = await import(f); console.log(typeof m.handler); }`;
    const output = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
      env: {
        PATH: process.env.PATH,
        AWS_REGION: 'us-east-1',
        AWS_ACCESS_KEY_ID: 'test',
        AWS_SECRET_ACCESS_KEY: 'test',
        AWS_EC2_METADATA_DISABLED: 'true',
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
        POWERTOOLS_LOG_LEVEL: 'SILENT',
        TXS_TABLE_NAME: 'apps',
      },
    });
    expect(output.trim().split('\n')).toEqual([...bundles.keys()].map(() => 'function'));
  });

  it('reports the size of each bundle', () => {
    const sizes = Object.fromEntries(
      [...bundles].map(([name, file]) => {
        // What the import loads: index.mjs and the chunks it imports statically.
        const loaded = importedFiles(file);
        return [
          name,
          {
            files: loaded.length,
            bytes: loaded.reduce((sum, f) => sum + statSync(f).size, 0),
            gzipBytes: loaded.reduce((sum, f) => sum + gzipSync(readFileSync(f)).length, 0),
          },
        ];
      }),
    );
    console.table(
      Object.fromEntries(
        Object.entries(sizes).map(([name, s]) => [
          name,
          { files: s.files, KiB: Math.round(s.bytes / 1024), 'gzip KiB': Math.round(s.gzipBytes / 1024) },
        ]),
      ),
    );
    mkdirSync(new URL('.', RESULTS), { recursive: true });
    writeFileSync(
      RESULTS,
      `${JSON.stringify({ source: 'test/unit/cdk/bundles.test.ts (rolldown via CDK local bundling, minified ESM, SDK bundled)', bundles: sizes }, null, 2)}\n`,
    );
    expect(Object.keys(sizes)).toHaveLength(bundles.size);
  });
});
