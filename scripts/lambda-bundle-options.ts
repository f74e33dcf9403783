/**
 * esbuild options equal to the stack's NodejsFunction bundling, derived from `LAMBDA_BUNDLING` (the one
 * definition cdk/constructs/handler-function.ts gives NodejsFunction): the package build and the benchmarks
 * bundle the functions with exactly what `cdk synth` would.
 */
import type { BuildOptions } from 'esbuild';
import { LAMBDA_BUNDLING } from '../cdk/constructs/handler-function.js';

/** esbuild options of a function bundle (externalModules: [] → the AWS SDK is bundled). */
export const LAMBDA_BUNDLE_OPTIONS: BuildOptions = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: LAMBDA_BUNDLING.target,
  minify: LAMBDA_BUNDLING.minify,
  sourcemap: LAMBDA_BUNDLING.sourceMap,
  sourcesContent: LAMBDA_BUNDLING.sourcesContent,
  mainFields: [...LAMBDA_BUNDLING.mainFields],
  banner: { js: LAMBDA_BUNDLING.banner },
  external: [...LAMBDA_BUNDLING.externalModules],
  logLevel: 'error',
};
