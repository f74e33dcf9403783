/**
 * esbuild options of the prebuilt `txs` command (`dist/cli/main.js`): one ES module with commander inside,
 * code split so that what only some commands need (the SigV4 signer and the AWS credential chain) loads in
 * its own chunk when used. The package build uses them, and a test checks what the entry loads eagerly.
 */
import type { BuildOptions } from 'esbuild';

/**
 * The esbuild banner for ESM bundles: gives CommonJS dependencies that call `require()` at run time a
 * working `require`, created on the first call (every file of a bundle carries the banner, and few ever
 * call `require`).
 */
export const ESM_REQUIRE_BANNER =
  "import { createRequire } from 'node:module'; let requireHere; const require = (id) => (requireHere ??= createRequire(import.meta.url))(id);";

/** The entry point of the command, relative to the repository root. */
export const CLI_ENTRY = 'lib/cli/main.ts';

/** esbuild options of the CLI bundle (add `absWorkingDir` and `outdir`). */
export const CLI_BUNDLE_OPTIONS: BuildOptions = {
  entryPoints: { main: CLI_ENTRY },
  bundle: true,
  splitting: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  mainFields: ['module', 'main'],
  banner: { js: ESM_REQUIRE_BANNER },
  sourcemap: true,
  sourcesContent: false,
  legalComments: 'none',
  logLevel: 'error',
};
