/**
 * The one bundling definition of every function: the rolldown options the construct bundles with at synth
 * time (from a clone), `npm run build` prebuilds the package's bundles with, and `bench/` measures. Each
 * function is a directory: `index.mjs` (the handler's export), `chunks/initial-<hash>.mjs` (every module the
 * handler's import needs, as one file) and the other `chunks/`, the modules it imports dynamically (the
 * schedulers' SDK clients, the modules of the schedulers a deployment does not enable by default, the regex
 * engine of a filtered log read, the SDK's rarely used parts), loaded only when a request needs them. The
 * AWS SDK is bundled as published: no SDK module is replaced.
 *
 * Why rolldown and not esbuild: a cold start pays for each file it loads, and esbuild's code splitting cuts
 * the code the handler shares with its lazy imports into one chunk per set of importers (a run loaded 31
 * files for its import alone). Rolldown can put everything the import needs into one chunk (the
 * {@link INITIAL_CHUNK_GROUP} group), which the lazy chunks then import from: a lazy import no longer costs
 * the handler's import a file.
 *
 * @module
 */
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * Rolldown's input and output options for one function: the subset of rolldown's `InputOptions` and
 * `OutputOptions` this definition sets (declared here, so the package's types do not depend on rolldown).
 */
export interface LambdaBuildOptions {
  input: {
    platform: 'node';
    cwd: string;
    input: Record<string, string>;
    resolve: { mainFields: string[]; extensionAlias: Record<string, string[]> };
    transform: { target: string };
    checks: { ineffectiveDynamicImport: boolean };
    logLevel: 'warn';
  };
  output: {
    dir: string;
    format: 'esm';
    minify: boolean;
    sourcemap: boolean;
    sourcemapExcludeSources: boolean;
    charset: 'ascii';
    entryFileNames: string;
    chunkFileNames: string;
    codeSplitting: { groups: { name: string; tags: '$initial'[] }[] };
  };
}

/**
 * The name of the chunk group that holds every module the handler's import loads (rolldown's built-in
 * `$initial` tag marks the modules reachable from the entry by static imports).
 */
export const INITIAL_CHUNK_GROUP = 'initial';

/**
 * The rolldown options every function is bundled with, apart from its entry point and output directory (see
 * {@link lambdaBuildOptions}): ESM for Node 22, minified, ASCII only, the modules the import needs in one
 * chunk and the ones loaded on demand in others, source maps without sources beside the code (for offline
 * decoding; not enabled at run time), and every dependency bundled, the AWS SDK included: the versions
 * package-lock.json pins, not whatever the runtime ships. A CommonJS dependency's `require()` of a Node
 * built-in gets rolldown's `createRequire` shim. Plain data, so that a child process can be handed them (see
 * {@link bundleFunction}).
 */
export const LAMBDA_BUNDLING: {
  readonly input: Omit<LambdaBuildOptions['input'], 'cwd' | 'input'>;
  readonly output: Omit<LambdaBuildOptions['output'], 'dir'>;
} = {
  input: {
    platform: 'node',
    // The SDK's ES modules (`module`), which tree-shake; `main` is its CommonJS build.
    resolve: { mainFields: ['module', 'main'], extensionAlias: { '.js': ['.ts', '.js'] } },
    transform: { target: 'node22' },
    // A module one function always needs is imported statically by its handler and on demand by code the
    // other functions share (the workspace bucket: the workspaces route, and runs that name a workspace).
    checks: { ineffectiveDynamicImport: false },
    logLevel: 'warn',
  },
  output: {
    format: 'esm',
    minify: true,
    sourcemap: true,
    sourcemapExcludeSources: true,
    // Non-ASCII characters escaped: a file with a single one is decoded as UTF-8 and held by V8 as a two-byte
    // string, which the cold start reads and parses more slowly than one-byte source.
    charset: 'ascii',
    entryFileNames: '[name].mjs',
    chunkFileNames: 'chunks/[name]-[hash].mjs',
    codeSplitting: { groups: [{ name: INITIAL_CHUNK_GROUP, tags: ['$initial'] }] },
  },
};

/** The full rolldown options to bundle `entry` (relative to `projectRoot`) into `outdir/index.mjs`. */
export function lambdaBuildOptions(projectRoot: string, entry: string, outdir: string): LambdaBuildOptions {
  const { input, output } = structuredClone(LAMBDA_BUNDLING);
  return {
    input: { ...input, cwd: projectRoot, input: { index: path.join(projectRoot, entry) } },
    output: { ...output, dir: outdir },
  };
}

/** Thrown at synth time when the project to bundle has no rolldown, or bundling fails. */
export class BundlingError extends Error {
  override readonly name = 'BundlingError';
}

/** The file URL of the rolldown installed in `projectRoot`. */
function rolldownOf(projectRoot: string, entry: string): string {
  try {
    return pathToFileURL(createRequire(path.join(projectRoot, 'package.json')).resolve('rolldown')).href;
  } catch (error) {
    throw new BundlingError(
      `cannot bundle ${entry}: no rolldown in ${projectRoot} (${(error as Error).message}); run \`npm ci\` there`,
    );
  }
}

/**
 * Bundles one function with the rolldown installed in `projectRoot`, synchronously (CDK's local bundling is
 * synchronous and rolldown's API is not: a child `node` runs it).
 *
 * @throws BundlingError when `projectRoot` has no rolldown (run `npm ci` there), or the build fails.
 */
export function bundleFunction(projectRoot: string, entry: string, outdir: string): void {
  const rolldown = rolldownOf(projectRoot, entry);
  const { input, output } = lambdaBuildOptions(projectRoot, entry, outdir);
  const script = [
    `const { rolldown } = await import(${JSON.stringify(rolldown)});`,
    `const bundle = await rolldown(${JSON.stringify(input)});`,
    `await bundle.write(${JSON.stringify(output)});`,
    'await bundle.close();',
  ].join('\n');
  const child = spawnSync(process.execPath, ['--input-type=module', '--eval', script], {
    cwd: projectRoot,
    encoding: 'utf8',
    stdio: ['ignore', 'inherit', 'pipe'],
  });
  if (child.status !== 0) {
    throw new BundlingError(`cannot bundle ${entry}: ${(child.stderr || String(child.error)).trim()}`);
  }
}
