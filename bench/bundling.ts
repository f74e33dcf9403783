/**
 * The stack's Lambda bundling for the benchmarks: every function built with the options of
 * scripts/lambda-bundle-options.ts (the stack's `LAMBDA_BUNDLING`), with the largest inputs of each bundle.
 */
import { mkdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BuildOptions, build } from 'esbuild';
import { FUNCTIONS, ROUTES } from '../functions/routes.js';
import { LAMBDA_BUNDLE_OPTIONS } from '../scripts/lambda-bundle-options.js';

/** Repository root. */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** One function of the stack. */
export interface FunctionEntry {
  name: string;
  entry: string;
  kind: 'api' | 'event';
}

/** Every function the stack deploys: the API routes, then the event functions. */
export const FUNCTION_ENTRIES: FunctionEntry[] = FUNCTIONS.map((f) => ({
  name: f.name,
  entry: f.entry,
  kind: ROUTES.some((r) => r.name === f.name) ? 'api' : 'event',
}));

/** A built bundle. */
export interface BuiltBundle extends FunctionEntry {
  /** `<outDir>/<name>/index.mjs`. */
  file: string;
  /** Size of index.mjs (bytes; the source map is not deployed code). */
  bytes: number;
  /** Largest inputs by bytes in the output (package or source folder). */
  top: { input: string; bytes: number }[];
}

function groupOf(input: string): string {
  const nm = input.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = input.slice(nm + 'node_modules/'.length).split('/');
    return rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1]}` : (rest[0] ?? input);
  }
  return input.split('/').slice(0, 2).join('/');
}

/** Builds every function bundle into `outDir` with {@link LAMBDA_BUNDLE_OPTIONS}. */
export async function buildBundles(outDir: string, options: BuildOptions = {}): Promise<BuiltBundle[]> {
  const built: BuiltBundle[] = [];
  for (const fn of FUNCTION_ENTRIES) {
    const file = join(outDir, fn.name, 'index.mjs');
    mkdirSync(dirname(file), { recursive: true });
    const result = await build({
      ...LAMBDA_BUNDLE_OPTIONS,
      ...options,
      absWorkingDir: ROOT,
      entryPoints: [join(ROOT, fn.entry)],
      outfile: file,
      metafile: true,
    });
    const groups = new Map<string, number>();
    for (const output of Object.values(result.metafile.outputs)) {
      for (const [input, info] of Object.entries(output.inputs)) {
        groups.set(groupOf(input), (groups.get(groupOf(input)) ?? 0) + info.bytesInOutput);
      }
    }
    const top = [...groups.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, Number(process.env.TOP ?? 6))
      .map(([input, bytes]) => ({ input, bytes }));
    built.push({ ...fn, file, bytes: statSync(file).size, top });
  }
  return built;
}
