/**
 * The stack's Lambda bundling for the benchmarks: every function built with the one bundling definition
 * (cdk/constructs/lambda-bundling.ts: `index.mjs` plus `chunks/`), with what its import loads, what it
 * deploys, and the largest inputs of what its import loads. A directory of bundles built elsewhere (another
 * commit's, for a before/after run) is read with {@link readBundles}.
 */
import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type InputOptions, type OutputChunk, type OutputOptions, rolldown } from 'rolldown';
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
  /**
   * Largest inputs of what the import loads (package or source folder), by their bytes in the bundle before
   * minifying (rolldown minifies the chunk as a whole); empty for a read bundle.
   */
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

/** The chunks importing `entry` loads: it and every chunk reachable by static imports. */
export function staticClosure(chunks: ReadonlyMap<string, OutputChunk>, entry: string): OutputChunk[] {
  const seen = new Map<string, OutputChunk>();
  const stack = [entry];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const chunk = chunks.get(next);
    if (chunk === undefined || seen.has(next)) continue;
    seen.set(next, chunk);
    stack.push(...chunk.imports);
  }
  return [...seen.values()];
}

/** Rolldown options added to the stack's, for an experiment (one file per function, the SDK external). */
export interface BundleOverrides {
  input?: InputOptions;
  output?: OutputOptions;
}

/** Bundles one function with the stack's options (plus `overrides`) into `dir`; its chunks by file name. */
export async function bundleOne(
  entry: string,
  dir: string,
  overrides: BundleOverrides = {},
): Promise<Map<string, OutputChunk>> {
  const { input, output } = lambdaBuildOptions(ROOT, entry, dir);
  const bundle = await rolldown({ ...input, ...overrides.input });
  const result = await bundle.write({ ...output, ...overrides.output });
  await bundle.close();
  return new Map(
    result.output.filter((o): o is OutputChunk => o.type === 'chunk').map((c) => [c.fileName, c]),
  );
}

/** Every `.mjs` file under `dir`. */
function moduleFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.mjs'))
    .map((f) => join(dir, f));
}

/**
 * Builds every function bundle (or each of `entries`) into `outDir/<name>/` with the stack's options, plus
 * `overrides`.
 */
export async function buildBundles(
  outDir: string,
  overrides: BundleOverrides = {},
  entries: FunctionEntry[] = FUNCTION_ENTRIES,
): Promise<BuiltBundle[]> {
  const built: BuiltBundle[] = [];
  for (const fn of entries) {
    const dir = join(outDir, fn.name);
    mkdirSync(dir, { recursive: true });
    const chunks = await bundleOne(fn.entry, dir, overrides);
    if (!chunks.has('index.mjs')) throw new Error(`${fn.name}: rolldown wrote no index.mjs`);
    const loaded = staticClosure(chunks, 'index.mjs');
    const groups = new Map<string, number>();
    for (const chunk of loaded) {
      for (const [id, info] of Object.entries(chunk.modules)) {
        const input = relative(ROOT, id);
        groups.set(groupOf(input), (groups.get(groupOf(input)) ?? 0) + info.renderedLength);
      }
    }
    const top = [...groups.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, Number(process.env.TOP ?? 6))
      .map(([input, bytes]) => ({ input, bytes }));
    built.push({
      ...fn,
      file: join(dir, 'index.mjs'),
      importBytes: loaded.reduce((sum, chunk) => sum + Buffer.byteLength(chunk.code), 0),
      deployedBytes: moduleFiles(dir).reduce((sum, f) => sum + statSync(f).size, 0),
      top,
    });
  }
  return built;
}

/**
 * The bundles in `dir/<name>/index.mjs` as another build left them (e.g. `npm run build`'s `dist/lambda` of
 * another commit). With no build output to follow, `importBytes` is index.mjs alone (all of a single-file
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
