import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Metafile } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { CLI_BUNDLE_OPTIONS } from '../../../scripts/cli-bundle-options.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/** The sources and Node modules `txs` loads before any command runs: the entry and its static imports. */
async function loadedAtStart(): Promise<{ inputs: string[]; builtins: string[] }> {
  const result = await build({
    ...CLI_BUNDLE_OPTIONS,
    absWorkingDir: ROOT,
    outdir: join(ROOT, 'dist/cli'),
    write: false,
    sourcemap: false,
    metafile: true,
  });
  const outputs = (result.metafile as Metafile).outputs;
  const inputs = new Set<string>();
  const builtins = new Set<string>();
  const pending = ['dist/cli/main.js'];
  const seen = new Set<string>();
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    if (seen.has(file)) continue;
    seen.add(file);
    const output = outputs[file];
    if (output === undefined) continue;
    for (const input of Object.keys(output.inputs)) inputs.add(input);
    for (const imported of output.imports) {
      if (imported.kind === 'dynamic-import') continue;
      if (imported.external) builtins.add(imported.path);
      else pending.push(imported.path);
    }
  }
  return { inputs: [...inputs], builtins: [...builtins] };
}

describe('the prebuilt txs command', () => {
  it('loads at start neither zod, nor YAML, nor an HTTP module, nor node:crypto, nor the AWS SDK', async () => {
    const { inputs, builtins } = await loadedAtStart();
    expect(inputs).toContain('lib/cli/commands/run.ts');
    expect(inputs.filter((input) => input.includes('node_modules/zod/'))).toEqual([]);
    expect(inputs.filter((input) => input.includes('node_modules/@aws-sdk/'))).toEqual([]);
    expect(inputs.filter((input) => input.includes('node_modules/yaml/'))).toEqual([]);
    expect(builtins).toContain('node:fs');
    expect(builtins.filter((name) => /^(node:)?(https?|crypto|undici)$/.test(name))).toEqual([]);
  });
});
