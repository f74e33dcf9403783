import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Metafile } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import type { AppResponse } from '../../../lib/cli/index.js';
import { CLI_BUNDLE_OPTIONS } from '../../../scripts/cli-bundle-options.js';
import { appResponse, type StubServer, startStubServer } from './helpers.js';

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

describe('the prebuilt txs command, run', () => {
  const dir = mkdtempSync(join(tmpdir(), 'txs-cli-bundle-'));
  let stub: StubServer | undefined;
  afterAll(async () => {
    await stub?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Runs the bundle in `dir` as bin/txs.js does, against the stub. */
  function txs(args: string[]): Promise<{ code: number; out: string; err: string }> {
    return new Promise((resolve) => {
      execFile(
        process.execPath,
        [join(dir, 'txs.mjs'), ...args],
        { env: { ...process.env, TXS_CONFIG: '/dev/null', TXS_ENDPOINT: stub?.url ?? '' }, timeout: 60_000 },
        (error, out, err) => resolve({ code: error === null ? 0 : Number(error.code ?? 1), out, err }),
      );
    });
  }

  it('prints YAML (describe, run --dryrun) with the yaml library it loads on demand', async () => {
    await build({ ...CLI_BUNDLE_OPTIONS, absWorkingDir: ROOT, outdir: dir, sourcemap: false });
    writeFileSync(join(dir, 'txs.mjs'), "import { runProcess } from './main.js';\nawait runProcess();\n");
    // An AppDef as the YAML shows it: only what this test prints.
    const app = {
      name: 'echo',
      roles: [{ name: 'echo', args: ['hi', '.5'] }],
    } as unknown as AppResponse['app'];
    stub = await startStubServer((req) => {
      if (req.method === 'GET' && req.path === '/v1/apps/local_cwd/echo-1') {
        return { body: appResponse('RUNNING', { app }) };
      }
      if (req.method === 'POST' && req.path === '/v1/dryrun') {
        return { body: { scheduler: 'aws_batch', app, request: { jobName: 'echo' } } };
      }
      return undefined;
    });
    const described = await txs(['describe', 'local_cwd://torchx/echo-1']);
    expect(described.err).toBe('');
    expect(described.out).toBe('name: echo\nroles:\n  - name: echo\n    args:\n      - hi\n      - ".5"\n');
    const dryrun = await txs([
      'run',
      '--dryrun',
      '--workspace',
      '',
      '-s',
      'aws_batch',
      '-cfg',
      'queue=q',
      'utils.echo',
    ]);
    expect(dryrun.err).toBe('');
    expect(dryrun.out).toContain('=== APPLICATION ===\nname: echo\nroles:\n');
  });
});
