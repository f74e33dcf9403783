/**
 * Cold init of every function bundle: a fresh `node` (as the stack runs it: no `--enable-source-maps`) that
 * (a) imports the bundle, and (b) imports it and invokes its handler once, which builds
 * the clients and the Runner the route needs and sends the first request to a loopback stub; minus a bare
 * `node -e 0`. Runs alternate (bare, import, invoke, next bundle, …) and each figure is a median. With
 * `floor`, each function's SDK floor (bench/lib/sdk-floor.ts: just its SDK clients, sending the requests its
 * first invocation sent) is built and measured in the same rounds.
 */
import { spawn } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { marshall } from '@aws-sdk/util-dynamodb';
import { type AppRecord, makeAppDef, makeAppHandle } from '../lib/specs/index.js';
import { appItem } from '../lib/store/app-items.js';
import { apiEvent } from '../test/reliability/helpers/lambda.js';
import { type BuiltBundle, type BundleOverrides, buildBundles, ROOT, readBundles } from './bundling.js';
import { startAwsStub } from './lib/aws-stub.js';
import { writeFloorSources } from './lib/sdk-floor.js';
import { median, msSince, progress, round } from './lib/stats.js';
import { startXrayDaemonStub } from './lib/xray-daemon-stub.js';

/** The trace header of a sampled invocation, as Lambda sets it for a function with active tracing. */
export const SAMPLED_TRACE_HEADER =
  'Root=1-6744a1b2-0123456789abcdef01234567;Parent=53995c3f42cd8ad8;Sampled=1';

/** The cold-start goal: a function's import + first invocation at most this much over its SDK floor (ms). */
export const OVER_SDK_FLOOR_TARGET_MS = 20;

const BODY = {
  scheduler: 'aws_batch',
  component: 'dist.ddp',
  args: ['-j', '2x8', '--script', 'train.py'],
  cfg: { queue: 'ml-gpu-queue' },
};
/** The app the status, cancel, delete and logs probes address: the one the stub holds, and the job the
 * state-change fixture reports. */
const JOB_NAME = 'ctl-run-01hzx7k2-train';
const APP = { scheduler: 'aws_batch', appId: `ml-gpu-queue:${JOB_NAME}` };
/** The workspace the Workspaces probe offers: one the stub's bucket holds (a re-run of unchanged code). */
export const WORKSPACE_OFFER = {
  sha256: 'a'.repeat(64),
  size: 1_048_576,
  fileCount: 12,
  scheduler: 'aws_batch',
};
/** The bucket the stub's `HeadObject` answers for. */
const WORKSPACE_BUCKET = 'txs-bench-workspaces';

/** The record the stub answers `GetItem` and `Query` with (owned by the probe's caller; the state-change
 * fixture moves it to RUNNING). */
export function stubRecord(): AppRecord {
  const createdAt = Date.now() - 60_000;
  return {
    handle: makeAppHandle('aws_batch', 'torchx', APP.appId),
    scheduler: 'aws_batch',
    session: 'torchx',
    appId: APP.appId,
    nativeName: JOB_NAME,
    owner: 'arn:aws:iam::000000000000:user/alice',
    name: 'train',
    app: makeAppDef({ name: 'train' }),
    cfg: { queue: 'ml-gpu-queue' },
    state: 'SUBMITTED',
    numRestarts: 0,
    roles: [],
    attempt: 0,
    lastEventTime: createdAt,
    createdAt,
    updatedAt: createdAt,
    history: [],
  };
}

/**
 * The first event each function gets in the probe (exported for experiments comparing builds); undefined
 * for a function the probe does not know yet, which is not measured.
 */
export function firstEvent(name: string): unknown {
  switch (name) {
    case 'Schedulers':
      return apiEvent({ method: 'GET', resource: '/v1/schedulers' });
    case 'Components':
      return apiEvent({ method: 'GET', resource: '/v1/components' });
    case 'Dryrun':
      return apiEvent({ method: 'POST', resource: '/v1/dryrun', body: BODY });
    case 'Workspaces':
      return apiEvent({ method: 'POST', resource: '/v1/workspaces', body: WORKSPACE_OFFER });
    case 'Run':
      return apiEvent({ method: 'POST', resource: '/v1/apps', body: BODY });
    case 'List':
      return apiEvent({ method: 'GET', resource: '/v1/apps' });
    case 'Counts':
      return apiEvent({ method: 'GET', resource: '/v1/apps/counts' });
    case 'Status':
      return apiEvent({ method: 'GET', resource: '/v1/apps/{scheduler}/{appId}', pathParameters: APP });
    case 'Delete':
      return apiEvent({ method: 'DELETE', resource: '/v1/apps/{scheduler}/{appId}', pathParameters: APP });
    case 'Cancel':
      return apiEvent({
        method: 'POST',
        resource: '/v1/apps/{scheduler}/{appId}/cancel',
        pathParameters: APP,
      });
    case 'Logs':
      return apiEvent({
        method: 'GET',
        resource: '/v1/apps/{scheduler}/{appId}/logs',
        pathParameters: APP,
        query: { role: 'trainer' },
      });
    case 'Publisher': {
      // One committed state change on the table's stream (SUBMITTED → RUNNING), as Lambda delivers it.
      const record = stubRecord();
      const image = (r: AppRecord, version: number) =>
        marshall(appItem(r, version, 86_400), { removeUndefinedValues: true });
      return {
        Records: [
          {
            eventID: '1',
            eventName: 'MODIFY',
            dynamodb: {
              SequenceNumber: '1',
              OldImage: image(record, 1),
              NewImage: image(
                {
                  ...record,
                  state: 'RUNNING',
                  history: [{ from: 'SUBMITTED', to: 'RUNNING', time: record.createdAt, source: 'event' }],
                },
                2,
              ),
            },
          },
        ],
      };
    }
    case 'StateChange':
      return JSON.parse(
        readFileSync(join(ROOT, 'test/fixtures/aws-batch/events/batch-single-running.json'), 'utf8'),
      );
    case 'OpenApi':
    case 'Reconciler':
      return {};
    default:
      return undefined;
  }
}

interface ProcessSample {
  /** Wall time of the whole process (ms). */
  wallMs: number;
  /** CPU time (user + system) of the process when it exits (ms). */
  cpuMs: number;
  /** In-process import and first-invocation times (probe only). */
  importMs: number;
  invokeMs: number;
  /** The first invocation's HTTP status and body (API functions; probe only). */
  status?: number;
  body?: string;
  /** Inventory runs only: every file the process loaded. */
  loadedFiles?: string[];
}

const BARE = [
  '-e',
  'const c = process.cpuUsage(); process.stderr.write(JSON.stringify({cpuMs: (c.user + c.system) / 1000}))',
];

function timeProcess(args: string[], env: NodeJS.ProcessEnv): Promise<ProcessSample> {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      const wallMs = msSince(start);
      if (code === 0) {
        const report = JSON.parse(stderr.trim().split('\n').pop() ?? '{}') as Partial<ProcessSample>;
        resolve({
          wallMs,
          cpuMs: report.cpuMs ?? 0,
          importMs: report.importMs ?? 0,
          invokeMs: report.invokeMs ?? 0,
          ...(report.status !== undefined ? { status: report.status, body: report.body } : {}),
          ...(report.loadedFiles !== undefined ? { loadedFiles: report.loadedFiles } : {}),
        });
      } else reject(new Error(`${args.join(' ')} exited ${code}: ${stderr.slice(0, 2000)}`));
    });
  });
}

/** Cold-init figures of one bundle. */
export interface ColdInitResult {
  name: string;
  kind: 'api' | 'event';
  /** KB importing index.mjs loads (it and its static imports); all of a single-file bundle. */
  kb: number;
  /** KB of bundle code the import and the first invocation loaded (dynamically imported chunks included). */
  loadedKb: number;
  /** Files of the bundle the import and the first invocation loaded (each costs the module loader). */
  loadedFiles: number;
  /** KB of every `.mjs` file the function deploys. */
  deployedKb: number;
  /** Median wall time of "import the bundle" over bare node (ms). */
  importMs: number;
  /** Median wall time of "import + first invocation" over bare node (ms): the cold-init figure. */
  initMs: number;
  /** Median CPU time of "import + first invocation" over bare node's (ms): robust to a busy machine. */
  initCpuMs: number;
  /** In-process medians: the import itself, and the first invocation (clients built, first request). */
  inProcessImportMs: number;
  inProcessFirstInvokeMs: number;
  top: { input: string; kb: number }[];
  /** The AWS requests the first invocation sent (`service.action` → count), all answered successfully. */
  firstCalls: Record<string, number>;
  /** The X-Ray documents the first invocation sent to the daemon (subsegments: `name operation` → count). */
  firstTraces: Record<string, number>;
}

/** A variant of the build, of the runtime flags, or another build's bundles, measured like the stack's. */
export interface ColdInitVariant {
  name: string;
  /** Rolldown options added to the stack's. */
  build?: BundleOverrides;
  /** Node flags instead of the stack's (none). */
  flags?: string[];
  /** Bundles built elsewhere (`<dir>/<name>/index.mjs`, e.g. another commit's `dist/lambda`). */
  dir?: string;
}

/** Cold-init figures of all bundles. */
export interface ColdInitReport {
  bareNodeMs: number;
  bareNodeCpuMs: number;
  runs: number;
  bundles: ColdInitResult[];
  /** The same figures for each variant, measured in the same alternating rounds. */
  variants: { name: string; bundles: ColdInitResult[] }[];
  /** With `floor`: each function's SDK floor, measured in the same alternating rounds. */
  floor?: ColdInitResult[];
}

/** One set of bundles under measurement: the stack's, or a variant's. */
interface MeasuredSet {
  bundles: BuiltBundle[];
  flags: string[];
  samples: Map<string, { import: ProcessSample[]; invoke: ProcessSample[] }>;
  /** Bytes and number of the bundle's files the import and the first invocation loaded. */
  loaded: Map<string, { bytes: number; files: number }>;
  firstCalls: Map<string, Record<string, number>>;
  firstTraces: Map<string, Record<string, number>>;
}

/**
 * Builds the bundles and measures them (and each variant, and with `floor` each function's SDK floor,
 * alternately in the same rounds).
 */
export async function coldInit(
  runs = 11,
  variants: ColdInitVariant[] = [],
  options: { floor?: boolean } = {},
): Promise<ColdInitReport> {
  progress('building bundles with the stack options');
  const outDir = join(tmpdir(), `txs-bench-bundles-${process.pid}`);
  const measured: MeasuredSet[] = [];
  for (const [i, variant] of [{ name: 'stack' } as ColdInitVariant, ...variants].entries()) {
    const bundles = (
      variant.dir !== undefined
        ? readBundles(variant.dir)
        : await buildBundles(join(outDir, `set-${i}`), variant.build ?? {})
    ).filter((b) => firstEvent(b.name) !== undefined);
    measured.push({
      bundles,
      flags: variant.flags ?? [],
      samples: new Map(bundles.map((b) => [b.name, { import: [], invoke: [] }])),
      loaded: new Map(),
      firstCalls: new Map(),
      firstTraces: new Map(),
    });
  }
  const stub = await startAwsStub(stubRecord(), 'ml-gpu-queue', WORKSPACE_OFFER);
  const daemon = await startXrayDaemonStub();
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'bench',
    AWS_SECRET_ACCESS_KEY: 'bench',
    AWS_SESSION_TOKEN: 'bench',
    AWS_ENDPOINT_URL: stub.url,
    AWS_EC2_METADATA_DISABLED: 'true',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    AWS_LAMBDA_FUNCTION_NAME: 'bench',
    POWERTOOLS_LOG_LEVEL: 'SILENT',
    TXS_TABLE_NAME: 'txs-apps',
    TXS_EVENT_BUS_NAME: 'txs-bench-bus',
    TXS_BATCH_QUEUES: 'ml-gpu-queue',
    TXS_WORKSPACE_BUCKET: WORKSPACE_BUCKET,
    // Every invocation is sampled, with a loopback X-Ray daemon: the figures include tracing the SDK calls.
    _X_AMZN_TRACE_ID: SAMPLED_TRACE_HEADER,
    AWS_XRAY_DAEMON_ADDRESS: daemon.address,
  };
  const probe = join(ROOT, 'bench/probe.mjs');
  const invoke = (set: MeasuredSet, b: BuiltBundle, extra: NodeJS.ProcessEnv = {}) =>
    timeProcess([...set.flags, probe, b.file, 'invoke', JSON.stringify(firstEvent(b.name))], {
      ...env,
      ...extra,
    });
  // First an inventory run of each (untimed: which files the import and the first invocation load, which
  // requests it sends; its first invocation must succeed: the stub answers every request, so a failure here
  // is a broken probe, not a figure), which also warms the file cache; then alternating measured rounds.
  const takeInventory = async (set: MeasuredSet) => {
    for (const b of set.bundles) {
      stub.calls.clear();
      daemon.documents.length = 0;
      const sample = await invoke(set, b, { TXS_PROBE_INVENTORY: '1' });
      if (sample.status !== undefined && sample.status >= 300) {
        throw new Error(`cold init: ${b.file}'s first invocation answered ${sample.status}: ${sample.body}`);
      }
      set.firstCalls.set(b.name, Object.fromEntries(stub.calls));
      // Datagrams sent just before the process exited may still be on their way over loopback.
      await new Promise((resolve) => setTimeout(resolve, 50));
      const traces: Record<string, number> = {};
      for (const document of daemon.documents) {
        const aws = document.aws as { operation?: string } | undefined;
        const key = `${String(document.name)}${aws?.operation === undefined ? '' : ` ${aws.operation}`}`;
        traces[key] = (traces[key] ?? 0) + 1;
      }
      set.firstTraces.set(b.name, traces);
      const dir = dirname(b.file);
      const files = new Set((sample.loadedFiles ?? []).filter((f) => f.startsWith(`${dir}/`)));
      set.loaded.set(b.name, {
        bytes: [...files].reduce((sum, f) => sum + statSync(f).size, 0),
        files: files.size,
      });
    }
  };
  for (const set of measured) await takeInventory(set);
  let floorSet: MeasuredSet | undefined;
  const stackSet = measured[0];
  if (options.floor && stackSet !== undefined) {
    progress("building each function's SDK floor from the requests its first invocation sent");
    const sources = writeFloorSources(join(ROOT, 'cdk.out', 'sdk-floor'), stackSet.firstCalls);
    const entries = stackSet.bundles.map((b) => ({
      name: b.name,
      kind: b.kind,
      entry: relative(ROOT, sources.get(b.name) ?? ''),
    }));
    const bundles = await buildBundles(join(outDir, 'floor'), {}, entries);
    floorSet = {
      bundles,
      flags: [],
      samples: new Map(bundles.map((b) => [b.name, { import: [], invoke: [] }])),
      loaded: new Map(),
      firstCalls: new Map(),
      firstTraces: new Map(),
    };
    await takeInventory(floorSet);
    for (const b of bundles) {
      const sorted = (calls: Record<string, number> | undefined) =>
        JSON.stringify(Object.entries(calls ?? {}).sort());
      const want = sorted(stackSet.firstCalls.get(b.name));
      const got = sorted(floorSet.firstCalls.get(b.name));
      if (want !== got) throw new Error(`cold init: ${b.name}'s floor sent ${got}, the function ${want}`);
    }
    measured.push(floorSet);
  }
  const bare: ProcessSample[] = [];
  const functions = stackSet?.bundles.length ?? 0;
  for (let round = 0; round < runs; round++) {
    progress(`cold init round ${round + 1}/${runs} (${functions} functions × ${measured.length} builds)`);
    for (let i = 0; i < functions; i++) {
      bare.push(await timeProcess(BARE, env));
      for (const set of measured) {
        const b = set.bundles[i] as BuiltBundle;
        const s = set.samples.get(b.name) as { import: ProcessSample[]; invoke: ProcessSample[] };
        s.import.push(await timeProcess([...set.flags, probe, b.file, 'import'], env));
        s.invoke.push(await invoke(set, b));
      }
    }
  }
  await stub.close();
  await daemon.close();
  const bareNodeMs = median(bare.map((x) => x.wallMs));
  const bareNodeCpuMs = median(bare.map((x) => x.cpuMs));
  const results = (set: MeasuredSet): ColdInitResult[] =>
    set.bundles.map((b) => {
      const s = set.samples.get(b.name) as { import: ProcessSample[]; invoke: ProcessSample[] };
      return {
        name: b.name,
        kind: b.kind,
        kb: round(b.importBytes / 1024),
        loadedKb: round((set.loaded.get(b.name)?.bytes ?? 0) / 1024),
        loadedFiles: set.loaded.get(b.name)?.files ?? 0,
        deployedKb: round(b.deployedBytes / 1024),
        importMs: round(median(s.import.map((x) => x.wallMs)) - bareNodeMs),
        initMs: round(median(s.invoke.map((x) => x.wallMs)) - bareNodeMs),
        initCpuMs: round(median(s.invoke.map((x) => x.cpuMs)) - bareNodeCpuMs),
        inProcessImportMs: round(median(s.import.map((x) => x.importMs))),
        inProcessFirstInvokeMs: round(median(s.invoke.map((x) => x.invokeMs))),
        top: b.top.map((t) => ({ input: t.input, kb: round(t.bytes / 1024) })),
        firstCalls: set.firstCalls.get(b.name) ?? {},
        firstTraces: set.firstTraces.get(b.name) ?? {},
      };
    });
  const [stack, ...others] = measured.filter((set) => set !== floorSet);
  return {
    bareNodeMs: round(bareNodeMs),
    bareNodeCpuMs: round(bareNodeCpuMs),
    runs,
    bundles: stack === undefined ? [] : results(stack),
    variants: others.map((set, v) => ({ name: variants[v]?.name ?? `variant ${v}`, bundles: results(set) })),
    ...(floorSet === undefined ? {} : { floor: results(floorSet) }),
  };
}
