/**
 * The package as a user gets it: `npm pack` (which builds dist/ through `prepack`), installed from the
 * tarball into a CDK app in a temporary directory outside the repository, offline (dependencies from the npm
 * cache; aws-cdk-lib and constructs, the app's own dependencies, linked from this clone). The app is
 * synthesized with plain node (no tsx, no bundler reachable: the construct would have to bundle), every
 * function asset must be the package's prebuilt bundle, the app type-checks against the package's `.d.ts`,
 * and the installed `txs` answers `--help` and `builtins` (against a local server). Not part of `npm test`
 * (it builds and packs the package): `npm run test:package`, run by `.ci/run`.
 */
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FUNCTIONS } from '../../functions/routes.js';
import type { LocalServer } from '../../lib/local/server.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PACKAGE: { name: string; version: string } = JSON.parse(
  readFileSync(path.join(ROOT, 'package.json'), 'utf8'),
);

let work: string;
let app: string;
let installed: string;
let server: LocalServer | undefined;

/** PATH without this clone's node_modules/.bin, so that no bundler (or tsx) is reachable. */
const CLEAN_PATH = (process.env.PATH ?? '')
  .split(path.delimiter)
  .filter((dir) => !dir.includes('node_modules'))
  .join(path.delimiter);

const userEnv = (): NodeJS.ProcessEnv => ({
  PATH: CLEAN_PATH,
  HOME: work,
  TXS_CONFIG: '/dev/null',
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  CDK_DISABLE_VERSION_CHECK: '1',
  npm_config_update_notifier: 'false',
});

interface LockEntry {
  version?: string;
  resolved?: string;
  integrity?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  [key: string]: unknown;
}

/**
 * Writes the consumer app's package.json (depending on the tarball only) and its package-lock.json: the
 * tarball plus the closure of its dependencies, copied from this clone's lockfile (same versions, same
 * integrity), so that `npm ci --offline` installs everything from the npm cache without asking the registry.
 */
function writeConsumerApp(dir: string, tarballName: string): void {
  const lock: { packages: Record<string, LockEntry> } = JSON.parse(
    readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8'),
  );
  const manifest = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  const spec = `file:../${tarballName}`;
  const tarball = readFileSync(path.join(dir, '..', tarballName));
  const packages: Record<string, LockEntry> = {
    '': { name: 'consumer-app', version: '1.0.0', dependencies: { [manifest.name]: spec } },
    [`node_modules/${manifest.name}`]: {
      version: manifest.version,
      resolved: spec,
      integrity: `sha512-${createHash('sha512').update(tarball).digest('base64')}`,
      license: manifest.license,
      dependencies: manifest.dependencies,
      bin: manifest.bin,
      engines: manifest.engines,
      peerDependencies: manifest.peerDependencies,
      peerDependenciesMeta: manifest.peerDependenciesMeta,
    },
  };
  // Node's resolution: from the requiring package's folder up to the top-level node_modules.
  const resolveFrom = (from: string, name: string): string | undefined => {
    for (let base = from; ; ) {
      const candidate = `${base === '' ? '' : `${base}/`}node_modules/${name}`;
      if (lock.packages[candidate] !== undefined) return candidate;
      if (base === '') return undefined;
      const up = base.lastIndexOf('/node_modules/');
      base = up < 0 ? '' : base.slice(0, up);
    }
  };
  const queue: [string, Record<string, string>][] = [['', manifest.dependencies]];
  for (let item = queue.shift(); item !== undefined; item = queue.shift()) {
    const [from, deps] = item;
    for (const name of Object.keys(deps)) {
      const at = resolveFrom(from, name);
      if (at === undefined || packages[at] !== undefined) continue;
      const { dev: _dev, devOptional: _devOptional, peer: _peer, ...entry } = lock.packages[at] as LockEntry;
      packages[at] = entry;
      queue.push([at, { ...entry.dependencies, ...entry.optionalDependencies }]);
    }
  }
  writeFileSync(
    path.join(dir, 'package.json'),
    JSON.stringify({
      name: 'consumer-app',
      version: '1.0.0',
      private: true,
      type: 'module',
      dependencies: { [manifest.name]: spec },
    }),
  );
  writeFileSync(
    path.join(dir, 'package-lock.json'),
    JSON.stringify({ name: 'consumer-app', version: '1.0.0', lockfileVersion: 3, requires: true, packages }),
  );
}

/** Runs a command without blocking this process (which serves the local API). */
function run(
  file: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv },
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { ...options, encoding: 'utf8', timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({
        code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1,
        stdout,
        stderr,
      });
    });
  });
}

const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

beforeAll(async () => {
  work = mkdtempSync(path.join(tmpdir(), 'txs-package-'));
  const packed = execFileSync('npm', ['pack', '--silent', '--pack-destination', work], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, npm_config_update_notifier: 'false' },
  });
  const tarball = path.join(work, packed.trim().split('\n').at(-1) ?? '');
  app = path.join(work, 'app');
  mkdirSync(app);
  writeConsumerApp(app, path.basename(tarball));
  execFileSync('npm', ['ci', '--offline', '--no-audit', '--no-fund', '--ignore-scripts'], {
    cwd: app,
    encoding: 'utf8',
    env: { ...process.env, npm_config_update_notifier: 'false' },
  });
  installed = path.join(app, 'node_modules', PACKAGE.name);
  // The consumer app's own CDK dependencies (the package's peer dependencies), from this clone.
  for (const dep of ['aws-cdk-lib', 'constructs', '@types/node']) {
    mkdirSync(path.dirname(path.join(app, 'node_modules', dep)), { recursive: true });
    symlinkSync(path.join(ROOT, 'node_modules', dep), path.join(app, 'node_modules', dep), 'dir');
  }
  const { startLocalServer } = await import('../../lib/local/server.js');
  server = await startLocalServer({
    port: 0,
    dataDir: path.join(work, 'data'),
    inMemory: true,
    reconcileEveryMs: 0,
  });
}, 300_000);

afterAll(async () => {
  await server?.close();
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
});

describe('the packed npm package', () => {
  it('holds the prebuilt CLI, construct, types, the dashboard and one bundle per function, and no sources', () => {
    expect(existsSync(path.join(installed, 'dist/cli/main.js'))).toBe(true);
    for (const file of ['index.html', 'app.js', 'app.css'])
      expect(existsSync(path.join(installed, 'dist/ui', file)), file).toBe(true);
    expect(existsSync(path.join(installed, 'ui'))).toBe(false);
    expect(existsSync(path.join(installed, 'dist/cdk/index.d.ts'))).toBe(true);
    for (const fn of FUNCTIONS)
      expect(existsSync(path.join(installed, 'dist/lambda', fn.name, 'index.mjs')), fn.name).toBe(true);
    expect(existsSync(path.join(installed, 'lib'))).toBe(false);
    expect(existsSync(path.join(installed, 'functions'))).toBe(false);
    expect(existsSync(path.join(installed, 'package-lock.json'))).toBe(false);
    expect(readFileSync(path.join(installed, 'LICENSE'), 'utf8')).toContain(
      'Copyright (c) Meta Platforms, Inc. and affiliates.',
    );
    // A CLI user gets neither the local-mode nor the build tools.
    for (const dep of ['tsx', 'dynalite', 'esbuild', 'rolldown', 'typescript'])
      expect(existsSync(path.join(app, 'node_modules', dep)), dep).toBe(false);
  });

  it('synthesizes a CDK app that imports the construct, deploying the prebuilt bundles (no bundler)', () => {
    writeFileSync(
      path.join(app, 'app.mjs'),
      [
        "import { App, Stack } from 'aws-cdk-lib';",
        "import { TorchxServerless } from 'torchx-serverless/cdk';",
        "const app = new App({ outdir: 'cdk.out' });",
        "const stack = new Stack(app, 'Consumer');",
        "const txs = new TorchxServerless(stack, 'Txs', { stageName: 'test' });",
        'app.synth();',
        'console.log(JSON.stringify(Object.keys(txs.functions)));',
      ].join('\n'),
    );
    const out = execFileSync(process.execPath, ['app.mjs'], { cwd: app, encoding: 'utf8', env: userEnv() });
    expect(JSON.parse(out.trim().split('\n').at(-1) ?? '[]')).toEqual(FUNCTIONS.map((f) => f.name));

    const template = JSON.parse(readFileSync(path.join(app, 'cdk.out/Consumer.template.json'), 'utf8'));
    const functions = Object.values<{ Type: string; Properties: { Handler: string; Runtime: string } }>(
      template.Resources,
    ).filter((r) => r.Type === 'AWS::Lambda::Function');
    expect(functions).toHaveLength(FUNCTIONS.length);
    for (const fn of functions)
      expect(fn.Properties).toMatchObject({ Handler: 'index.handler', Runtime: 'nodejs22.x' });

    // Every asset directory is a copy of one of the package's prebuilt bundles, byte for byte.
    const prebuilt = new Set(
      FUNCTIONS.map((fn) => sha256(path.join(installed, 'dist/lambda', fn.name, 'index.mjs'))),
    );
    const assets = readdirSync(path.join(app, 'cdk.out')).filter((d) => d.startsWith('asset.'));
    expect(assets.length).toBeGreaterThan(0);
    const bundled = assets.map((d) => sha256(path.join(app, 'cdk.out', d, 'index.mjs')));
    for (const hash of bundled) expect(prebuilt.has(hash)).toBe(true);
    expect(new Set(bundled)).toEqual(prebuilt);
  });

  it('type-checks a TypeScript app against the published declarations', () => {
    writeFileSync(
      path.join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2023',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          types: ['node'],
        },
        files: ['typed.ts'],
      }),
    );
    writeFileSync(
      path.join(app, 'typed.ts'),
      [
        "import { App, Stack } from 'aws-cdk-lib';",
        "import { TorchxServerless } from 'torchx-serverless/cdk';",
        "import { TxsClient } from 'torchx-serverless/client';",
        "import { type AppDef, parseAppHandle } from 'torchx-serverless/specs';",
        "const stack = new Stack(new App(), 'S');",
        "new TorchxServerless(stack, 'Txs', { memorySize: 1024 });",
        '// @ts-expect-error memorySize is a number',
        "new TorchxServerless(stack, 'Bad', { memorySize: 'big' });",
        "const handle: string = parseAppHandle('aws_batch://torchx/app-1').appId;",
        'export const used: [typeof TxsClient, AppDef | undefined, string] = [TxsClient, undefined, handle];',
      ].join('\n'),
    );
    const result = spawnSync(
      process.execPath,
      [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', '.'],
      {
        cwd: app,
        encoding: 'utf8',
        env: userEnv(),
      },
    );
    expect(result.stdout + result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  it('runs the installed txs: --help, builtins and a dry run against a local server', async () => {
    const txs = path.join(app, 'node_modules/.bin/txs');
    const help = spawnSync(txs, ['--help'], { cwd: app, encoding: 'utf8', env: userEnv() });
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('Usage: txs [options] [command]');

    // Asynchronously: the local server answers from this process's event loop.
    const builtins = await run(txs, ['builtins'], {
      cwd: app,
      env: { ...userEnv(), TXS_ENDPOINT: server?.url ?? '' },
    });
    expect(builtins.stderr).toBe('');
    expect(builtins.code).toBe(0);
    expect(builtins.stdout).toContain('dist.ddp');
    expect(builtins.stdout).toContain('utils.echo');

    // YAML, from the library the prebuilt CLI loads on demand (the AppDef of a dry run).
    const dryrun = await run(
      txs,
      [
        'run',
        '--dryrun',
        '--workspace',
        '',
        '-s',
        'aws_batch',
        '-cfg',
        'queue=q',
        'utils.echo',
        '--msg',
        'hi',
      ],
      { cwd: app, env: { ...userEnv(), TXS_ENDPOINT: server?.url ?? '' } },
    );
    expect(dryrun.stderr).toBe('');
    expect(dryrun.code).toBe(0);
    expect(dryrun.stdout).toMatch(/^=== APPLICATION ===\nname: echo\n/);
    expect(dryrun.stdout).toContain('\nroles:\n  - name: echo\n');
  });
});
