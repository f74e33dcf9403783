/**
 * The stack's Lambda bundling for the benchmarks: every function built with the one bundling definition
 * (cdk/constructs/lambda-bundling.ts: `index.mjs` plus `chunks/`), with what its import loads, what it
 * deploys, and the largest inputs of what its import loads. A directory of bundles built elsewhere (another
 * commit's, for a before/after run) is read with {@link readBundles}.
 */
import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BuildOptions, build, type Metafile } from 'esbuild';
import { lambdaBuildOptions } from '../cdk/constructs/lambda-bundling.js';
import { FUNCTIONS, ROUTES } from '../functions/routes.js';

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
  /** `<outDir>/<name>/index.mjs`: what Lambda imports. */
  file: string;
  /** Bytes importing `index.mjs` loads: it and the chunks it imports statically (source maps excluded). */
  importBytes: number;
  /** Bytes of every `.mjs` file of the function (what it deploys, source maps excluded). */
  deployedBytes: number;
  /** Largest inputs by bytes of what the import loads (package or source folder); empty for a read bundle. */
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

/** The outputs importing `entry` loads: it and every chunk reachable by static imports. */
function staticClosure(metafile: Metafile, entry: string): string[] {
  const seen = new Set<string>();
  const stack = [entry];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    if (seen.has(next)) continue;
    seen.add(next);
    for (const imported of metafile.outputs[next]?.imports ?? []) {
      if (imported.kind === 'import-statement' && !imported.external) stack.push(imported.path);
    }
  }
  return [...seen];
}

/** Every `.mjs` file under `dir`. */
function moduleFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.mjs'))
    .map((f) => join(dir, f));
}

/**
 * Builds every function bundle (or each of `entries`) into `outDir/<name>/` with the stack's options, plus
 * `options`.
 */
export async function buildBundles(
  outDir: string,
  options: BuildOptions = {},
  entries: FunctionEntry[] = FUNCTION_ENTRIES,
): Promise<BuiltBundle[]> {
  const built: BuiltBundle[] = [];
  for (const fn of entries) {
    const dir = join(outDir, fn.name);
    mkdirSync(dir, { recursive: true });
    const result = await build({ ...lambdaBuildOptions(ROOT, fn.entry, dir), ...options, metafile: true });
    const metafile = result.metafile as Metafile;
    const entry = Object.keys(metafile.outputs).find((o) => o.endsWith('/index.mjs') || o === 'index.mjs');
    if (entry === undefined) throw new Error(`${fn.name}: esbuild wrote no index.mjs`);
    const loaded = staticClosure(metafile, entry);
    const groups = new Map<string, number>();
    for (const output of loaded) {
      for (const [input, info] of Object.entries(metafile.outputs[output]?.inputs ?? {})) {
        groups.set(groupOf(input), (groups.get(groupOf(input)) ?? 0) + info.bytesInOutput);
      }
    }
    const top = [...groups.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, Number(process.env.TOP ?? 6))
      .map(([input, bytes]) => ({ input, bytes }));
    built.push({
      ...fn,
      file: join(dir, 'index.mjs'),
      importBytes: loaded.reduce((sum, o) => sum + (metafile.outputs[o]?.bytes ?? 0), 0),
      deployedBytes: moduleFiles(dir).reduce((sum, f) => sum + statSync(f).size, 0),
      top,
    });
  }
  return built;
}

/**
 * The bundles in `dir/<name>/index.mjs` as another build left them (e.g. `npm run build`'s `dist/lambda` of
 * another commit). With no metafile to follow, `importBytes` is index.mjs alone (all of a single-file
 * bundle); the cold-init bench measures what each first call loads either way.
 */
export function readBundles(dir: string): BuiltBundle[] {
  return FUNCTION_ENTRIES.map((fn) => {
    const file = join(dir, fn.name, 'index.mjs');
    if (!existsSync(file)) throw new Error(`no bundle ${file}`);
    const deployedBytes = moduleFiles(join(dir, fn.name)).reduce((sum, f) => sum + statSync(f).size, 0);
    return { ...fn, file, importBytes: statSync(file).size, deployedBytes, top: [] };
  });
}
