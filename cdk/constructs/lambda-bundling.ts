/**
 * The one bundling definition of every function: the esbuild options the construct bundles with at synth
 * time (from a clone), `npm run build` prebuilds the package's bundles with, and `bench/` measures. Each
 * function is a directory: `index.mjs` (the handler) and `chunks/`, the modules it imports dynamically (the
 * schedulers' SDK clients, the modules of the schedulers a deployment does not enable by default, the regex
 * engine of a filtered log read, the Runner of a status refresh, the SDK's rarely used parts), loaded only
 * when a request needs them, and the code they share with the handler. The AWS SDK is bundled as
 * published: no SDK module is replaced.
 *
 * @module
 */
import { createRequire } from 'node:module';
import path from 'node:path';

/**
 * The esbuild banner for ESM bundles: gives CommonJS dependencies that call `require()` at run time a
 * working `require`, created on the first call (every file of a bundle carries the banner, and few ever
 * call `require`: creating one per file cost a cold start 1–2 ms for 30 files).
 */
export const ESM_REQUIRE_BANNER =
  "import { createRequire } from 'node:module'; let requireHere; const require = (id) => (requireHere ??= createRequire(import.meta.url))(id);";

/**
 * The esbuild options every function is bundled with, apart from its entry point and output directory (see
 * {@link lambdaBuildOptions}): ESM for Node 22, minified, code splitting (`index.mjs` plus `chunks/`), source
 * maps without sources (kept beside the code for offline decoding; not enabled at run time), and the AWS SDK
 * bundled (`external: []`): the versions package-lock.json pins, not whatever the runtime ships.
 */
export const LAMBDA_BUNDLING = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node22',
  minify: true,
  splitting: true,
  outExtension: { '.js': '.mjs' },
  chunkNames: 'chunks/[name]-[hash]',
  sourcemap: true,
  sourcesContent: false,
  mainFields: ['module', 'main'],
  banner: { js: ESM_REQUIRE_BANNER },
  external: [] as readonly string[],
  logLevel: 'error',
} as const;

/** The full esbuild options to bundle `entry` (relative to `projectRoot`) into `outdir/index.mjs`. */
export function lambdaBuildOptions(projectRoot: string, entry: string, outdir: string) {
  return {
    ...LAMBDA_BUNDLING,
    mainFields: [...LAMBDA_BUNDLING.mainFields],
    external: [...LAMBDA_BUNDLING.external],
    absWorkingDir: projectRoot,
    entryPoints: { index: path.join(projectRoot, entry) },
    outdir,
  };
}

/** Thrown at synth time when the project to bundle has no esbuild. */
export class MissingEsbuildError extends Error {
  override readonly name = 'MissingEsbuildError';
}

/**
 * Bundles one function with the esbuild installed in `projectRoot` (synchronously: CDK's local bundling is
 * synchronous).
 *
 * @throws MissingEsbuildError when `projectRoot` has no esbuild (run `npm ci` there).
 */
export function bundleFunction(projectRoot: string, entry: string, outdir: string): void {
  let esbuild: { buildSync(options: ReturnType<typeof lambdaBuildOptions>): unknown };
  try {
    esbuild = createRequire(path.join(projectRoot, 'package.json'))('esbuild');
  } catch (error) {
    throw new MissingEsbuildError(
      `cannot bundle ${entry}: no esbuild in ${projectRoot} (${(error as Error).message}); run \`npm ci\` there`,
    );
  }
  esbuild.buildSync(lambdaBuildOptions(projectRoot, entry, outdir));
}
