/**
 * What each function bundle loads, from rolldown's output with the stack's bundling definition: which
 * modules the import of `index.mjs` brings in (it and the chunks it imports statically) and which stay in
 * chunks a request imports on demand. Guards the structure the cold-init figures rest on (a static import in
 * the wrong module silently puts a scheduler or an SDK client back into every cold start); sizes are
 * measured by `npm run bench`, never asserted.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { OutputChunk } from 'rolldown';
import { beforeAll, describe, expect, it } from 'vitest';
import { bundleOne, staticClosure } from '../../../bench/bundling.js';
import { FUNCTIONS } from '../../../functions/routes.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const BUILD_TIMEOUT_MS = 120_000;

/** Each function's chunks, by file name (`index.mjs`, `chunks/…`). */
let bundles: Map<string, Map<string, OutputChunk>>;

beforeAll(async () => {
  bundles = new Map();
  for (const fn of FUNCTIONS) {
    bundles.set(fn.name, await bundleOne(fn.entry, path.join(ROOT, 'cdk.out', 'bundle-contents', fn.name)));
  }
}, BUILD_TIMEOUT_MS);

function chunksOf(name: string): Map<string, OutputChunk> {
  const chunks = bundles.get(name);
  if (chunks === undefined) throw new Error(`no bundle ${name}`);
  return chunks;
}

/** The source modules (relative to the repository) of `chunks` that left code in them. */
function sourcesOf(chunks: OutputChunk[]): string[] {
  return chunks.flatMap((c) =>
    Object.entries(c.modules)
      .filter(([, info]) => info.renderedLength > 0)
      .map(([id]) => path.relative(ROOT, id)),
  );
}

/** What importing the function's `index.mjs` loads. */
function importLoads(name: string): string[] {
  return sourcesOf(staticClosure(chunksOf(name), 'index.mjs'));
}

/**
 * The chunk that holds source module `module` (a dynamic import target: its own chunk, or a chunk it shares
 * with modules that other lazy chunks import).
 */
function chunkFor(name: string, module: string): OutputChunk {
  const id = path.join(ROOT, module);
  const chunks = [...chunksOf(name).values()];
  const chunk = chunks.find((c) => c.facadeModuleId === id) ?? chunks.find((c) => c.moduleIds.includes(id));
  if (chunk === undefined) throw new Error(`${name}: no chunk for ${module}`);
  return chunk;
}

/** What importing the chunk built for `module` loads beyond what the handler's import already did. */
function chunkLoads(name: string, module: string): string[] {
  const chunks = chunksOf(name);
  const loaded = new Set(staticClosure(chunks, 'index.mjs'));
  return sourcesOf(staticClosure(chunks, chunkFor(name, module).fileName).filter((c) => !loaded.has(c)));
}

/**
 * What a request that loads module `module` loads beyond the handler's import: its chunk, and the chunks
 * that chunk imports on demand (a scheduler module's SDK and scheduler code, imported when the Runner builds
 * it).
 */
function requestLoads(name: string, module: string): string[] {
  const chunks = chunksOf(name);
  const loaded = new Set(staticClosure(chunks, 'index.mjs'));
  const chunk = chunkFor(name, module);
  const reached = [chunk.fileName, ...chunk.dynamicImports].flatMap((file) => staticClosure(chunks, file));
  return [...new Set(sourcesOf([...new Set(reached)].filter((c) => !loaded.has(c))))];
}

const matching = (inputs: string[], pattern: RegExp) => inputs.filter((i) => pattern.test(i));

/** The module of an SDK client class (`@aws-sdk/client-batch/dist-es/BatchClient.js`). */
const SDK_CLIENT = /node_modules\/@aws-sdk\/client-[a-z-]+\/dist-es\/[A-Za-z]+Client\.js$/;

describe('Lambda bundle contents (rolldown output, the stack bundling definition)', () => {
  it("loads everything its import needs from one chunk (besides index.mjs and rolldown's runtime)", () => {
    for (const fn of FUNCTIONS) {
      const chunks = chunksOf(fn.name);
      const loaded = staticClosure(chunks, 'index.mjs').map((c) => c.fileName);
      const others = loaded.filter((f) => f !== 'index.mjs' && !/^chunks\/rolldown-runtime-/.test(f));
      expect(others, fn.name).toEqual([expect.stringMatching(/^chunks\/initial-[\w-]+\.mjs$/)]);
      // The lazy chunks import what they share with the handler from that chunk, not from copies.
      const initial = chunks.get(others[0] ?? '');
      const sharedIds = new Set(initial?.moduleIds);
      for (const chunk of chunks.values()) {
        if (chunk === initial) continue;
        expect(
          chunk.moduleIds.filter((id) => sharedIds.has(id)),
          `${fn.name} ${chunk.fileName}`,
        ).toEqual([]);
      }
    }
  });

  it('writes only ASCII, so V8 holds each file as one-byte text (our messages say "…" and "→")', () => {
    for (const fn of FUNCTIONS) {
      for (const chunk of chunksOf(fn.name).values()) {
        const first = chunk.code.search(/\P{ASCII}/u);
        expect(
          first === -1 ? '' : chunk.code.slice(Math.max(0, first - 40), first + 10),
          `${fn.name} ${chunk.fileName}`,
        ).toBe('');
      }
    }
  });

  it("reaches DynamoDB through the AWS SDK's DynamoDB client, marshalling with its util", () => {
    for (const name of ['List', 'Counts', 'Status', 'StateChange', 'Run']) {
      const loads = importLoads(name);
      expect(
        matching(loads, /node_modules\/@aws-sdk\/client-dynamodb\/dist-es\/DynamoDBClient\.js$/),
        name,
      ).toHaveLength(1);
      expect(matching(loads, /node_modules\/@aws-sdk\/util-dynamodb\//).length, name).toBeGreaterThan(0);
      expect(loads, name).toContain('lib/store/item-client.ts');
    }
  });

  it('loads no SDK client and no record store for components, the OpenAPI document, dry runs and schedulers', () => {
    for (const name of ['Components', 'OpenApi', 'Dryrun', 'Schedulers']) {
      const loads = importLoads(name);
      expect(matching(loads, SDK_CLIENT), name).toEqual([]);
      expect(matching(loads, /^lib\/store\//), name).toEqual([]);
      // Nor the SDK's runtime: tracing classifies throttling itself (importing `@smithy/core/retry` for it
      // brought the retry middleware and the protocols into every function's static imports).
      expect(matching(loads, /node_modules\/@smithy\//), name).toEqual([]);
    }
    // Nor zod where no body or query is parsed: the input bounds the components and the Planner check
    // (lib/specs/limits.ts) are plain constants, apart from the schemas.
    for (const name of ['OpenApi', 'Components', 'Schedulers']) {
      expect(matching(importLoads(name), /node_modules\/zod\//), name).toEqual([]);
    }
    // A dry run loads the default schedulers' modules with the handler (above: no SDK); each loads its SDK
    // clients only to submit.
    for (const name of ['Dryrun', 'Schedulers']) {
      const loads = importLoads(name);
      expect(loads, name).toContain('functions/schedulers/aws-batch.ts');
      expect(loads, name).toContain('functions/schedulers/aws-sagemaker.ts');
      for (const module of [
        'functions/schedulers/aws-batch-clients.ts',
        'functions/schedulers/aws-sagemaker-clients.ts',
      ]) {
        expect(matching(chunkLoads(name, module), SDK_CLIENT).length, `${name} ${module}`).toBeGreaterThan(0);
      }
    }
  });

  it('describes the schedulers from their registry: no Planner, no component', () => {
    const loads = importLoads('Schedulers');
    expect(loads).toContain('lib/schedulers/registry.ts');
    expect(matching(loads, /^lib\/(runner|components)\//)).toEqual([]);
    // A dry run needs both.
    expect(importLoads('Dryrun')).toEqual(
      expect.arrayContaining(['lib/runner/planner.ts', 'lib/components/dist.ts']),
    );
  });

  it('loads no scheduler, Runner or component code for list, status and state changes (state mapping only)', () => {
    for (const name of ['List', 'Status', 'StateChange']) {
      const loads = importLoads(name);
      expect(
        matching(
          loads,
          /^lib\/(components\/|schedulers\/local-cwd\/|schedulers\/aws-(batch|sagemaker)\/(scheduler|translator|translate)\.ts)/,
        ),
        name,
      ).toEqual([]);
      expect(loads, name).not.toContain('lib/runner/runner.ts');
      // The store's DynamoDB client only: no scheduler's SDK client.
      expect(
        matching(loads, SDK_CLIENT).map((m) => m.slice(m.lastIndexOf('/') + 1)),
        name,
      ).toEqual(['DynamoDBClient.js']);
    }
    // A status refresh imports the Runner on demand.
    expect(chunkLoads('Status', 'functions/schedulers/table.ts')).toContain('lib/runner/runner.ts');
  });

  it("loads a scheduler, and its SDK client, when a request names it: none at import but the store's", () => {
    for (const name of ['Run', 'Cancel', 'Delete', 'Logs', 'Reconciler']) {
      const loads = importLoads(name);
      expect(
        matching(loads, SDK_CLIENT).map((m) => m.slice(m.lastIndexOf('/') + 1)),
        name,
      ).toEqual(['DynamoDBClient.js']);
      // The default schedulers' translation comes with the handler; their clients and the other schedulers
      // when a request names them.
      expect(loads, name).toContain('lib/schedulers/aws-batch/translator.ts');
      expect(
        matching(
          loads,
          /^lib\/schedulers\/(aws-(batch|sagemaker)\/scheduler\.ts|local-cwd|slurm|kubernetes|lsf|local-docker)/,
        ),
        name,
      ).toEqual([]);
      const batch = requestLoads(name, 'functions/schedulers/aws-batch-clients.ts');
      expect(matching(batch, /(Batch|SageMaker)Client\.js$/), name).toEqual([
        expect.stringMatching(/BatchClient\.js$/),
      ]);
      // The CloudWatch Logs client comes with the first log read, not with the scheduler.
      expect(
        matching(chunkLoads(name, 'functions/schedulers/aws-batch-clients.ts'), /CloudWatchLogsClient\.js$/),
        name,
      ).toEqual([]);
      expect(
        matching(chunkLoads(name, 'lib/schedulers/cloudwatch-logs.ts'), /CloudWatchLogsClient\.js$/),
        name,
      ).toHaveLength(1);
      const localCwd = chunkLoads(name, 'functions/schedulers/local-cwd.ts');
      expect(matching(localCwd, /^lib\/schedulers\/local-cwd\//).length, name).toBeGreaterThan(0);
      expect(matching(localCwd, SDK_CLIENT), name).toEqual([]);
    }
  });

  it('loads the S3 client and the presigner with the workspaces route, and for a run only when it names a workspace', () => {
    for (const name of ['Run', 'Dryrun']) {
      expect(matching(importLoads(name), /S3Client\.js$|s3-request-presigner/), name).toEqual([]);
      const s3 = chunkLoads(name, 'functions/workspaces/bucket.ts');
      expect(matching(s3, /S3Client\.js$/), name).toHaveLength(1);
      expect(matching(s3, /node_modules\/@aws-sdk\/s3-request-presigner\//).length, name).toBeGreaterThan(0);
    }
    // Every deployed call of the workspaces route asks the bucket: its client comes with the handler.
    const workspaces = importLoads('Workspaces');
    expect(matching(workspaces, /S3Client\.js$/)).toHaveLength(1);
    expect(workspaces).toContain('functions/workspaces/bucket.ts');
  });

  it('loads the regex engine only for a filtered log read', () => {
    expect(matching(importLoads('Logs'), /node_modules\/re2js\//)).toEqual([]);
    expect(
      matching(chunkLoads('Logs', 'lib/schedulers/log-filter.ts'), /node_modules\/re2js\//).length,
    ).toBeGreaterThan(0);
  });
});
