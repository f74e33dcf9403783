/**
 * What each function bundle loads, from esbuild's metafile with the stack's bundling definition: which
 * modules the import of `index.mjs` brings in (it and the chunks it imports statically) and which stay in
 * chunks a request imports on demand. Guards the structure the cold-init figures rest on (a static import in
 * the wrong module silently puts a scheduler or an SDK client back into every cold start); sizes are
 * measured by `npm run bench`, never asserted.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Metafile } from 'esbuild';
import { beforeAll, describe, expect, it } from 'vitest';
import { lambdaBuildOptions } from '../../../cdk/constructs/lambda-bundling.js';
import { FUNCTIONS } from '../../../functions/routes.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const BUILD_TIMEOUT_MS = 120_000;

let metafiles: Map<string, Metafile>;

beforeAll(async () => {
  const built = await Promise.all(
    FUNCTIONS.map(async (fn) => {
      const outdir = path.join(ROOT, 'cdk.out', 'bundle-contents', fn.name);
      const result = await build({
        ...lambdaBuildOptions(ROOT, fn.entry, outdir),
        write: false,
        metafile: true,
      });
      return [fn.name, result.metafile as Metafile] as const;
    }),
  );
  metafiles = new Map(built);
}, BUILD_TIMEOUT_MS);

function metafileOf(name: string): Metafile {
  const metafile = metafiles.get(name);
  if (metafile === undefined) throw new Error(`no bundle ${name}`);
  return metafile;
}

/** The source modules of the outputs reachable by static imports from `output`. */
function staticInputs(metafile: Metafile, output: string): string[] {
  const seen = new Set<string>();
  const stack = [output];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    if (seen.has(next)) continue;
    seen.add(next);
    for (const imported of metafile.outputs[next]?.imports ?? []) {
      if (imported.kind === 'import-statement' && !imported.external) stack.push(imported.path);
    }
  }
  return [...seen].flatMap((o) =>
    Object.entries(metafile.outputs[o]?.inputs ?? {})
      .filter(([, info]) => info.bytesInOutput > 0)
      .map(([input]) => input),
  );
}

/** What importing the function's `index.mjs` loads. */
function importLoads(name: string): string[] {
  const metafile = metafileOf(name);
  const entry = Object.keys(metafile.outputs).find((o) => o.endsWith('/index.mjs'));
  if (entry === undefined) throw new Error(`${name}: no index.mjs`);
  return staticInputs(metafile, entry);
}

/** What importing the chunk built for source module `module` (a dynamic import target) loads. */
function chunkLoads(name: string, module: string): string[] {
  const metafile = metafileOf(name);
  const chunk = Object.entries(metafile.outputs).find(([, o]) => o.entryPoint === module)?.[0];
  if (chunk === undefined) throw new Error(`${name}: no chunk for ${module}`);
  return staticInputs(metafile, chunk);
}

/**
 * What a request that loads module `module` loads: its chunk, and the chunks that chunk imports on demand
 * (a scheduler module's SDK and scheduler code, imported when the Runner builds it).
 */
function requestLoads(name: string, module: string): string[] {
  const metafile = metafileOf(name);
  const chunk = Object.entries(metafile.outputs).find(([, o]) => o.entryPoint === module)?.[0];
  if (chunk === undefined) throw new Error(`${name}: no chunk for ${module}`);
  const dynamic = (metafile.outputs[chunk]?.imports ?? [])
    .filter((i) => i.kind === 'dynamic-import' && !i.external)
    .map((i) => i.path);
  return [...new Set([chunk, ...dynamic].flatMap((output) => staticInputs(metafile, output)))];
}

const matching = (inputs: string[], pattern: RegExp) => inputs.filter((i) => pattern.test(i));

/** The module of an SDK client class (`@aws-sdk/client-batch/dist-es/BatchClient.js`). */
const SDK_CLIENT = /node_modules\/@aws-sdk\/client-[a-z-]+\/dist-es\/[A-Za-z]+Client\.js$/;

describe('Lambda bundle contents (esbuild metafile, the stack bundling definition)', () => {
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

  it('loads the S3 client and the presigner only for a request that names a workspace', () => {
    for (const name of ['Run', 'Dryrun', 'Workspaces']) {
      expect(matching(importLoads(name), /S3Client\.js$|s3-request-presigner/), name).toEqual([]);
      const s3 = chunkLoads(name, 'functions/workspaces/bucket.ts');
      expect(matching(s3, /S3Client\.js$/), name).toHaveLength(1);
      expect(matching(s3, /node_modules\/@aws-sdk\/s3-request-presigner\//).length, name).toBeGreaterThan(0);
    }
  });

  it('loads the regex engine only for a filtered log read', () => {
    expect(matching(importLoads('Logs'), /node_modules\/re2js\//)).toEqual([]);
    expect(
      matching(chunkLoads('Logs', 'lib/schedulers/log-filter.ts'), /node_modules\/re2js\//).length,
    ).toBeGreaterThan(0);
  });
});
