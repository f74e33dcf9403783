/**
 * `npx tsx bench/workspace.ts`: packing a 50 MB / 5,000-file workspace into its reproducible archive, and
 * `txs run --workspace` of it end to end against the local server.
 *
 * Builds the tree in a temporary directory (4,900 source-like text files of 1–7 KiB, which compress, and
 * 100 binary files of 300 KiB, which do not; 50 directories; files dated an hour back, as in a checkout), then
 * measures, in this process:
 *
 * - a pack without a cache (walk, hash, tar, gzip, write), and the system's `tar -czf` of the same tree for
 *   comparison;
 * - with a cache: the first pack (empty cache), a re-run with nothing changed (the goal: well under
 *   0.3 s, nothing read), and a re-run after editing one file.
 *
 * Then `txs run --workspace DIR utils.sh true` (bench/lib/workspace-run.ts; needs `npm run build:cli`): the
 * first run (pack + upload), a re-run of the unchanged tree beside the same run without a workspace (the
 * difference is what a workspace adds; the goal is 0.3 s at most, nothing uploaded), the same with
 * `--wait`, and the copy mechanisms a run's snapshot could use.
 *
 * Prints medians and writes bench/results/workspace.json. TorchX's counterpart, building and pushing a
 * Docker image of the workspace (torchx/workspace/docker_workspace.py), needs a Docker daemon, which this
 * machine does not have: only its first step, `_build_context`, is timed (run); the build and the push are
 * cited as the anchor, not measured. Usage:
 * `npx tsx bench/workspace.ts [-- --rounds=5] [--only=pack|run]`.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { packWorkspace } from '../lib/cli/workspace/archive.js';
import { median, msSince, round, table } from './lib/stats.js';
import { measureRuns, type RunFigures } from './lib/workspace-run.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const ROUNDS = Number(process.argv.find((a) => a.startsWith('--rounds='))?.split('=')[1] ?? 5);
const TEXT_FILES = 4900;
const BINARY_FILES = 100;
const BINARY_BYTES = 300 * 1024;
const DIRECTORIES = 50;
const ONLY = process.argv.find((a) => a.startsWith('--only='))?.split('=')[1];

if (ONLY !== 'pack' && !existsSync(join(ROOT, 'dist/cli/main.js'))) {
  console.error('dist/cli/main.js is missing: run `npm run build:cli` first (or pass --only=pack)');
  process.exit(1);
}

/** A deterministic pseudo-random generator (xorshift32), so every run builds the same tree. */
function generator(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32;
  };
}

const WORDS = [
  'import',
  'torch',
  'def',
  'return',
  'self',
  'model',
  'loss',
  'batch',
  'for',
  'in',
  'range',
  'optim',
];

function buildTree(root: string): { files: number; bytes: number } {
  const random = generator(42);
  const past = new Date(Date.now() - 3_600_000);
  let bytes = 0;
  for (let d = 0; d < DIRECTORIES; d += 1) mkdirSync(join(root, `pkg${d}`, 'sub'), { recursive: true });
  for (let i = 0; i < TEXT_FILES; i += 1) {
    const length = 1024 + Math.floor(random() * 6 * 1024);
    let text = '';
    while (text.length < length)
      text += `${WORDS[Math.floor(random() * WORDS.length)]}${random() < 0.1 ? '\n' : ' '}`;
    const path = join(root, `pkg${i % DIRECTORIES}`, i % 3 === 0 ? 'sub' : '', `m${i}.py`);
    writeFileSync(path, text.slice(0, length));
    utimesSync(path, past, past);
    bytes += length;
  }
  for (let i = 0; i < BINARY_FILES; i += 1) {
    const data = Buffer.alloc(BINARY_BYTES);
    for (let j = 0; j < data.length; j += 4) data.writeUInt32LE(Math.floor(random() * 2 ** 32), j);
    const path = join(root, `pkg${i % DIRECTORIES}`, `w${i}.bin`);
    writeFileSync(path, data);
    utimesSync(path, past, past);
    bytes += data.length;
  }
  return { files: TEXT_FILES + BINARY_FILES, bytes };
}

async function timed<T>(run: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const start = process.hrtime.bigint();
  const value = await run();
  return { ms: msSince(start), value };
}

/** Packing the tree: without a cache, the system's tar, and with a cache (empty, unchanged, one edit). */
async function measurePacking(tree: string) {
  const uncached: number[] = [];
  let archive = { sha256: '', size: 0, fileCount: 0, uncompressedSize: 0 };
  for (let i = 0; i < ROUNDS; i += 1) {
    const out = mkdtempSync(join(work, 'out-'));
    const { ms, value } = await timed(() => packWorkspace(tree, { outDir: out }));
    uncached.push(ms);
    archive = value;
    rmSync(out, { recursive: true });
  }

  const systemTar: number[] = [];
  for (let i = 0; i < ROUNDS; i += 1) {
    const start = process.hrtime.bigint();
    const result = spawnSync('tar', ['-czf', join(work, 'system.tar.gz'), '-C', tree, '.']);
    if (result.status !== 0) throw new Error(`tar failed: ${result.stderr}`);
    systemTar.push(msSince(start));
  }

  const firstWithCache: number[] = [];
  const unchanged: number[] = [];
  const oneEdit: number[] = [];
  for (let i = 0; i < ROUNDS; i += 1) {
    const cacheDir = join(work, `cache-${i}`);
    firstWithCache.push((await timed(() => packWorkspace(tree, { cacheDir }))).ms);
    for (let j = 0; j < 3; j += 1) {
      const { ms, value } = await timed(() => packWorkspace(tree, { cacheDir }));
      if (!value.cached) throw new Error('an unchanged re-run did not come from the cache');
      unchanged.push(ms);
    }
    writeFileSync(join(tree, 'pkg0', 'm0.py'), `# edit ${i}\n`);
    oneEdit.push((await timed(() => packWorkspace(tree, { cacheDir }))).ms);
    rmSync(cacheDir, { recursive: true });
  }

  const medians = {
    'pack, no cache': round(median(uncached)),
    'system tar -czf (reference)': round(median(systemTar)),
    'pack, first with cache': round(median(firstWithCache)),
    'unchanged re-run (cached)': round(median(unchanged)),
    're-run after one edit': round(median(oneEdit)),
  };
  console.log(
    table(
      ['case', 'median ms'],
      Object.entries(medians).map(([name, ms]) => [name, ms]),
    ),
  );
  console.log(
    `archive: ${round(archive.size / 1e6)} MB compressed from ${round(archive.uncompressedSize / 1e6)} MB, ${archive.fileCount} files`,
  );
  return {
    archive: { bytes: archive.size, uncompressedBytes: archive.uncompressedSize, files: archive.fileCount },
    medianMs: medians,
    samplesMs: { uncached, systemTar, firstWithCache, unchanged, oneEdit },
  };
}

const RESULTS = join(ROOT, 'bench/results/workspace.json');
const work = mkdtempSync(join(tmpdir(), 'txs-bench-workspace-'));
try {
  const tree = join(work, 'tree');
  mkdirSync(tree);
  const built = buildTree(tree);
  console.error(`built ${built.files} files, ${round(built.bytes / 1e6)} MB in ${tree}`);

  const previous = existsSync(RESULTS)
    ? (JSON.parse(readFileSync(RESULTS, 'utf8')) as Record<string, unknown>)
    : {};
  const packFigures = ONLY === 'run' ? previous.pack : await measurePacking(tree);
  let runFigures: RunFigures | undefined;
  if (ONLY !== 'pack') {
    runFigures = await measureRuns(ROOT, tree, work, ROUNDS);
    console.log(
      table(
        ['txs run (local server)', 'median ms'],
        Object.entries(runFigures.medianMs).map(([name, ms]) => [name, ms]),
      ),
    );
    console.log(`requests of the unchanged re-runs: ${JSON.stringify(runFigures.reRunRequests)}`);
  }
  mkdirSync(join(ROOT, 'bench/results'), { recursive: true });
  writeFileSync(
    RESULTS,
    `${JSON.stringify(
      {
        generatedAt: new Date().toISOString(),
        node: process.version,
        cpus: cpus().length,
        loadAverageAtEnd: loadavg().map((value) => round(value, 2)),
        rounds: ROUNDS,
        tree: { files: built.files, bytes: built.bytes, textFiles: TEXT_FILES, binaryFiles: BINARY_FILES },
        pack: packFigures,
        run: runFigures ?? previous.run,
        anchor:
          'TorchX (torchx/workspace/docker_workspace.py) builds the workspace into a Docker image: _build_context tars ' +
          'the workspace into a temporary file, build_workspace_and_update_role pulls role.image and runs a docker ' +
          'build of `FROM $IMAGE; COPY . .`, and push_images pushes the image to image_repo, on every run. Only ' +
          '_build_context is timed here (run.medianMs); the build and the push need a Docker daemon, which this ' +
          "machine does not have, and TorchX's code and docs give no figures for them.",
      },
      null,
      2,
    )}\n`,
  );
} finally {
  rmSync(work, { recursive: true, force: true });
}
