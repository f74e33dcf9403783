/**
 * Where each function's code comes from. An installed package carries one prebuilt bundle per function under
 * `dist/lambda/<name>/` (`npm run build`), so a consumer's synth needs no bundler, no sources and no
 * lockfile; a clone of the repository has no `lambda/` next to `cdk/` and bundles the handler sources with
 * rolldown at synth time, so that what deploys is always the code in the working tree.
 *
 * @module
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The root of the package this module runs from: the repository root when it runs from `cdk/` (a clone),
 * `dist/` when it runs compiled from `dist/cdk/` (an installed package).
 */
export const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Directory of the prebuilt bundles, relative to the compiled package root (`dist/`). */
export const PREBUILT_DIR_NAME = 'lambda';

/** Where one function's code comes from: a prebuilt bundle directory, or sources bundled at synth time. */
export type FunctionCode =
  | { readonly prebuiltDir: string; readonly projectRoot: string }
  | { readonly prebuiltDir?: undefined; readonly projectRoot: string };

/** Thrown at synth time when a function has neither a prebuilt bundle nor sources to bundle. */
export class MissingFunctionCodeError extends Error {
  override readonly name = 'MissingFunctionCodeError';
}

/**
 * Finds the code of function `name` (handler module `entry`). An explicit `projectRoot` always bundles from
 * sources there; otherwise the prebuilt bundle of this package is used when it exists, else the sources of
 * this package (a clone).
 *
 * @throws MissingFunctionCodeError when neither exists (a package built without its bundles).
 */
export function functionCode(
  name: string,
  entry: string,
  projectRoot?: string,
  packageRoot: string = PACKAGE_ROOT,
): FunctionCode {
  if (projectRoot !== undefined) return { projectRoot };
  const prebuiltDir = path.join(packageRoot, PREBUILT_DIR_NAME, name);
  if (existsSync(path.join(prebuiltDir, 'index.mjs'))) return { prebuiltDir, projectRoot: packageRoot };
  if (existsSync(path.join(packageRoot, entry))) return { projectRoot: packageRoot };
  throw new MissingFunctionCodeError(
    `function ${name}: no prebuilt bundle at ${prebuiltDir}/index.mjs and no source at ${path.join(packageRoot, entry)}; ` +
      'rebuild the package with `npm run build`, or pass `projectRoot` (a clone of torchx-serverless after `npm ci`)',
  );
}
