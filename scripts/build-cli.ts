/**
 * `npm run build:cli` (and part of `npm run build`): builds the `txs` command into `dist/cli/` — `main.js`
 * and its chunks — and writes `dist/cli/sources.json`, the repository files the bundle was built from (and
 * `package-lock.json`, for the dependencies bundled with them).
 * bin/txs.js in a clone runs `dist/cli/main.js` while none of those files is newer than it (the fast path),
 * and the sources through tsx otherwise.
 */
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { CLI_BUNDLE_OPTIONS } from './cli-bundle-options.js';

/** Name of the list of source files, next to `main.js`; bin/txs.js reads it. */
export const CLI_SOURCES_FILE = 'sources.json';

/**
 * Bundles the CLI into `outdir` and lists its inputs from outside `node_modules` and the lock file (paths
 * relative to `root`) in `outdir/sources.json`. Returns that list.
 */
export async function buildCli(root: string, outdir: string): Promise<string[]> {
  rmSync(outdir, { recursive: true, force: true }); // no chunks of an earlier build left behind
  const result = await build({ ...CLI_BUNDLE_OPTIONS, absWorkingDir: root, outdir, metafile: true });
  // The lock file stands for the bundled dependencies: `npm install` of another version changes it.
  const sources = [
    ...Object.keys(result.metafile.inputs).filter((input) => !input.includes('node_modules/')),
    ...(existsSync(join(root, 'package-lock.json')) ? ['package-lock.json'] : []),
  ].sort();
  writeFileSync(join(outdir, CLI_SOURCES_FILE), `${JSON.stringify(sources, null, 1)}\n`);
  return sources;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const started = performance.now();
  const sources = await buildCli(root, join(root, 'dist/cli'));
  console.log(
    `built dist/cli/main.js from ${sources.length} sources in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
}
