/**
 * `npm run build` (and `prepack`): builds the package into `dist/`.
 *
 * - `dist/cdk`, `dist/lib/specs`, `dist/lib/cli` (+ what they import): JavaScript and `.d.ts` from
 *   `tsc -p tsconfig.build.json`, the targets of the `exports` map (`./cdk`, `./client`, `./specs`).
 * - `dist/cli/main.js`: the `txs` command as one prebuilt ES module (commander inside, no zod; the SigV4
 *   signer, loaded only for a SigV4 endpoint, in its own chunk), run by bin/txs.js when the sources are absent or
 *   older than it (`dist/cli/sources.json` lists them; scripts/build-cli.ts).
 * - `dist/ui/`: the dashboard (`index.html`, `app.js`, `app.css`), served by `txs ui` from an installed package.
 * - `dist/lambda/<name>/`: one bundle per function of functions/routes.ts `FUNCTIONS` (`index.mjs` and its
 *   `chunks/`), with the stack's rolldown options (cdk/constructs/lambda-bundling.ts); the construct deploys
 *   these instead of bundling at synth time.
 *
 * Usage: `npm run build` (from a clone, after `npm ci`).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { rolldown } from 'rolldown';
import { PREBUILT_DIR_NAME } from '../cdk/constructs/function-code.js';
import { lambdaBuildOptions } from '../cdk/constructs/lambda-bundling.js';
import { FUNCTIONS } from '../functions/routes.js';
import { buildUiAssets } from '../lib/loopback/ui-assets.js';
import { buildCli } from './build-cli.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DIST = join(ROOT, 'dist');

const started = performance.now();
rmSync(DIST, { recursive: true, force: true });

// The library entry points, with types.
execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], {
  cwd: ROOT,
  stdio: 'inherit',
});

// The CLI: one file to load (no TypeScript, no resolution of hundreds of modules at start).
await buildCli(ROOT, join(DIST, 'cli'));

// The dashboard: one script and one style sheet, the same as the local server builds from ui/.
const ui = await buildUiAssets(join(ROOT, 'ui'));
mkdirSync(join(DIST, 'ui'), { recursive: true });
for (const [file, text] of [
  ['index.html', ui.html],
  ['app.js', ui.js],
  ['app.css', ui.css],
] as const) {
  writeFileSync(join(DIST, 'ui', file), text);
}

// One bundle per function, exactly as the stack would bundle it.
for (const fn of FUNCTIONS) {
  const { input, output } = lambdaBuildOptions(ROOT, fn.entry, join(DIST, PREBUILT_DIR_NAME, fn.name));
  const bundle = await rolldown(input);
  await bundle.write(output);
  await bundle.close();
}

console.log(
  `built dist/ in ${((performance.now() - started) / 1000).toFixed(1)} s: cdk, specs, client (.js + .d.ts), ` +
    `cli/main.js, ui/, ${FUNCTIONS.length} function bundles in dist/${PREBUILT_DIR_NAME}/`,
);
