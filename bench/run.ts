/**
 * `npm run bench`: every benchmark of issue 7, printed as tables and written to bench/results/latest.json.
 * `npm run bench -- --only=sizes,cold,xray,dryrun,calls,ingestion,list,latency` runs a subset; `--quick` uses
 * fewer runs and smaller tables (for trying changes, not for the README). `--baseline=[<label>=]<dir>`
 * (repeatable) measures another build's function bundles (`<dir>/<Function>/index.mjs`, e.g. another commit's
 * `dist/lambda`) in the same alternating cold-init rounds; `--out=<name>` writes bench/results/<name>.json.
 * For the local API latency, `--compare=<git revision or directory>` runs that revision's (or checkout's)
 * server alternately with this checkout's. `--rounds=<n>` sets the number of rounds of both (cold init: 11 by
 * default; latency: 2). `--floor` also builds and measures each function's SDK floor (bench/lib/sdk-floor.ts)
 * and checks the cold-start goal: at most +20 ms over it.
 */
import { writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildBundles, ROOT } from './bundling.js';
import { progress, round, table } from './lib/stats.js';

Object.assign(process.env, {
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'bench',
  AWS_SECRET_ACCESS_KEY: 'bench',
  AWS_EC2_METADATA_DISABLED: 'true',
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  POWERTOOLS_LOG_LEVEL: 'SILENT',
  POWERTOOLS_METRICS_DISABLED: 'true',
});

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const onlyArg = args.find((a) => a.startsWith('--only='));
const only = onlyArg ? new Set(onlyArg.slice('--only='.length).split(',')) : undefined;
const wanted = (name: string) => only === undefined || only.has(name);

const TARGETS = {
  overSdkFloorMs: 20,
  eventsPerSecond: 3000,
  listPage100kOver1k: 1.5,
};

const started = Date.now();
/** The machine's load when the run starts (other work on a shared machine moves every figure). */
const loadAverageAtStart = loadavg().map((l) => round(l, 2));
const results: Record<string, unknown> = {};
const verdicts: { target: string; met: boolean; measured: string }[] = [];
const out: string[] = [];
const section = (title: string, body: string) => {
  const text = `\n## ${title}\n\n${body}\n`;
  out.push(text);
  process.stdout.write(text);
};

/** Bundles of other builds (`<dir>/<Function>/index.mjs`) measured alternately with this one's. */
const baselines = args
  .filter((a) => a.startsWith('--baseline='))
  .map((a) => {
    const value = a.slice('--baseline='.length);
    const at = value.indexOf('=');
    return at < 0 ? { name: value, dir: value } : { name: value.slice(0, at), dir: value.slice(at + 1) };
  });

if (wanted('sizes')) {
  progress('bundle sizes: stack options, plus two experiments');
  const dir = join(tmpdir(), `txs-bench-sizes-${process.pid}`);
  const stack = await buildBundles(join(dir, 'stack'));
  const singleFile = await buildBundles(join(dir, 'single-file'), { output: { codeSplitting: false } });
  const sdkExternal = await buildBundles(join(dir, 'sdk-external'), {
    input: { external: [/^@aws-sdk\//, /^@smithy\//] },
  });
  const rows = stack.map((b, i) => ({
    name: b.name,
    kind: b.kind,
    kb: round(b.importBytes / 1024),
    deployedKb: round(b.deployedBytes / 1024),
    singleFileKb: round((singleFile[i]?.importBytes ?? 0) / 1024),
    sdkExternalKb: round((sdkExternal[i]?.importBytes ?? 0) / 1024),
    top: b.top.map((t) => `${t.input} ${round(t.bytes / 1024)}`).join(', '),
  }));
  results.bundleSizes = rows;
  section(
    'Bundle sizes (KB, minified ESM, SDK bundled; "import" = index.mjs and the chunks it imports statically)',
    table(
      [
        'function',
        'import',
        'deployed (all chunks)',
        'one file, no splitting',
        'SDK external',
        'largest inputs of the import (KB before minifying)',
      ],
      rows.map((r) => [r.name, r.kb, r.deployedKb, r.singleFileKb, r.sdkExternalKb, r.top]),
    ),
  );
}

if (wanted('cold')) {
  const { coldInit } = await import('./cold-init.js');
  const roundsArg = args.find((a) => a.startsWith('--rounds='));
  const report = await coldInit(
    roundsArg ? Number(roundsArg.slice('--rounds='.length)) : quick ? 3 : 11,
    baselines,
    { floor: args.includes('--floor') },
  );
  results.coldInit = report;
  section(
    `Cold init (ms over bare node ${report.bareNodeMs} ms, CPU ${report.bareNodeCpuMs} ms; median of ${report.runs} alternating runs; no --enable-source-maps, as deployed)`,
    table(
      [
        'function',
        'KB import',
        'KB first call',
        'files first call',
        'KB deployed',
        'import',
        'import + first call',
        'CPU, import + first call',
        'in-process import',
        'in-process first call',
        'AWS requests of the first call (all answered 2xx)',
      ],
      report.bundles.map((b) => [
        b.name,
        b.kb,
        b.loadedKb,
        b.loadedFiles,
        b.deployedKb,
        b.importMs,
        b.initMs,
        b.initCpuMs,
        b.inProcessImportMs,
        b.inProcessFirstInvokeMs,
        Object.entries(b.firstCalls)
          .map(([k, v]) => `${k.replace(/^DynamoDB_\d+\.|^Logs_\d+\./, '')}×${v}`)
          .join(' ') || '—',
      ]),
    ),
  );
  for (const variant of report.variants) {
    section(
      `This build against ${variant.name} (same alternating runs; ms over bare node)`,
      table(
        [
          'function',
          'KB first call',
          'KB first call, this',
          'CPU ms',
          'CPU ms, this',
          'wall ms',
          'wall ms, this',
        ],
        report.bundles.map((b) => {
          const before = variant.bundles.find((v) => v.name === b.name);
          return [
            b.name,
            before?.loadedKb ?? '',
            b.loadedKb,
            before?.initCpuMs ?? '',
            b.initCpuMs,
            before?.initMs ?? '',
            b.initMs,
          ];
        }),
      ),
    );
  }
  if (report.floor !== undefined) {
    const rows = report.bundles.map((b) => {
      const floor = report.floor?.find((f) => f.name === b.name);
      return {
        name: b.name,
        initMs: b.initMs,
        floorMs: floor?.initMs ?? 0,
        overMs: round(b.initMs - (floor?.initMs ?? 0)),
        overCpuMs: round(b.initCpuMs - (floor?.initCpuMs ?? 0)),
        floorKb: floor?.loadedKb ?? 0,
        files: b.loadedFiles,
        floorFiles: floor?.loadedFiles ?? 0,
      };
    });
    results.overSdkFloor = rows;
    section(
      `Cold start beside the SDK floor (ms over bare node, same alternating runs; the floor: just the function's SDK clients sending the same requests)`,
      table(
        [
          'function',
          'cold start',
          'SDK floor',
          'over the floor',
          'CPU over the floor',
          'KB of the floor',
          "files / the floor's",
          `goal ≤ +${TARGETS.overSdkFloorMs}`,
        ],
        rows.map((r) => [
          r.name,
          r.initMs,
          r.floorMs,
          r.overMs,
          r.overCpuMs,
          r.floorKb,
          `${r.files} / ${r.floorFiles}`,
          r.overMs <= TARGETS.overSdkFloorMs ? 'met' : 'missed',
        ]),
      ),
    );
    const missed = rows.filter((r) => r.overMs > TARGETS.overSdkFloorMs);
    verdicts.push({
      target: `cold start ≤ +${TARGETS.overSdkFloorMs} ms over the SDK floor`,
      met: missed.length === 0,
      measured: `${rows.length - missed.length}/${rows.length} within; ${Math.min(...rows.map((r) => r.overMs))}–${Math.max(...rows.map((r) => r.overMs))} ms over`,
    });
  }
}

if (wanted('xray')) {
  progress('X-Ray subsegment cost per SDK call');
  const { xrayOverhead } = await import('./xray-overhead.js');
  const report = await xrayOverhead(quick ? 5 : 20);
  results.xrayOverhead = report;
  section(
    `X-Ray subsegments: cost per SDK call (µs, median of alternating blocks, ${report.calls} GetItem calls each, wire answered in-process; first subsegment of a process ${report.firstSendMs} ms)`,
    table(
      ['calls', 'wall', 'CPU'],
      [
        ['untraced client', report.untraced.wallUs, report.untraced.cpuUs],
        ['traced, not sampled', report.notSampled.wallUs, report.notSampled.cpuUs],
        ['traced, sampled (one subsegment sent per call)', report.sampled.wallUs, report.sampled.cpuUs],
      ],
    ),
  );
}

const inProcess = ['dryrun', 'calls', 'ingestion', 'list'].some(wanted);
if (inProcess) {
  const { startFunctionsEnvironment } = await import('../test/reliability/helpers/environment.js');
  const { startDynaliteProcess } = await import('./lib/dynalite-child.js');
  const env = await startFunctionsEnvironment({ dynalite: startDynaliteProcess });
  try {
    if (wanted('dryrun')) {
      const { dryrunThroughput } = await import('./dryrun.js');
      const rows = await dryrunThroughput(env, quick ? { rounds: 5, chunkMs: 60 } : {});
      results.dryrun = rows;
      section(
        'In-process dry runs (alternating rounds; median CPU and wall time per dry run)',
        table(
          ['app', 'through', 'CPU µs each', '× TorchX submit_dryrun (CPU)', 'wall µs each', 'dry runs/s'],
          rows.map((r) => [r.app, r.via, r.cpuUsPerOp, r.vsTorchx ?? '—', r.usPerOp, r.perSecond]),
        ),
      );
      for (const app of new Set(rows.map((r) => r.app))) {
        const scheduler = rows.find((r) => r.app === app && r.via === 'scheduler');
        if (scheduler?.vsTorchx === undefined) continue;
        verdicts.push({
          target: `dry run ≥ 5× TorchX's submit_dryrun: ${app}`,
          met: scheduler.vsTorchx >= 5,
          measured: `scheduler ${scheduler.vsTorchx}× (${scheduler.cpuUsPerOp} µs CPU)`,
        });
      }
    }
    if (wanted('calls')) {
      const { awsCallsPerOperation } = await import('./calls.js');
      const rows = await awsCallsPerOperation(env);
      results.awsCalls = rows;
      const fmt = (r: Record<string, number>) =>
        Object.entries(r)
          .map(([k, v]) => `${k.replace(/Command$/, '')}×${v}`)
          .join(' ') || '—';
      section(
        'AWS calls per operation (SDK middleware on DynamoDB, the fake data plane for Batch/SageMaker/Logs)',
        table(
          ['operation', 'HTTP', 'DynamoDB', 'Batch / SageMaker / Logs', 'total'],
          rows.map((r) => [r.operation, r.status, fmt(r.dynamodb), fmt(r.backend), r.total]),
        ),
      );
      const status = rows.find((r) => r.operation === 'status');
      verdicts.push({
        target: 'status makes no scheduler call',
        met: status?.schedulerCalls === 0,
        measured: `status: ${status?.total} call(s), ${status?.schedulerCalls} to a scheduler`,
      });
    }
    if (wanted('ingestion')) {
      const { stateChangeIngestion } = await import('./ingestion.js');
      const rows = await stateChangeIngestion(env, quick ? 100 : 500);
      results.ingestion = rows;
      section(
        'State-change ingestion (events through the state-change function; dynalite in its own process)',
        table(
          [
            'concurrency',
            'events',
            'events/s into dynalite',
            'CPU ms/event',
            'events/s, DynamoDB in memory',
            'CPU ms/event, in memory',
            'reads/event',
            'writes/event',
            'dynalite GetItem/s',
          ],
          rows.map((r) => [
            r.concurrency,
            r.events,
            r.eventsPerSecond,
            r.cpuMsPerEvent,
            r.inMemoryEventsPerSecond,
            r.inMemoryCpuMsPerEvent,
            r.readsPerEvent,
            r.writesPerEvent,
            r.dynaliteGetItemsPerSecond,
          ]),
        ),
      );
      const best = Math.max(...rows.map((r) => r.eventsPerSecond));
      const bestMemory = Math.max(...rows.map((r) => r.inMemoryEventsPerSecond));
      verdicts.push({
        target: `≥ ${TARGETS.eventsPerSecond} events/s`,
        met: best >= TARGETS.eventsPerSecond,
        measured: `${best}/s into dynalite; ${bestMemory}/s with DynamoDB answered in memory (one process)`,
      });
    }
    if (wanted('list')) {
      const { listScaling } = await import('./list-scaling.js');
      const rows = await listScaling(env, quick ? [1_000, 10_000] : [1_000, 10_000, 100_000]);
      results.listScaling = rows;
      section(
        'List scaling (GET /v1/apps for one owner, in-process handler, dynalite in its own process)',
        table(
          [
            'records',
            'first page p50 ms',
            'first page p99 ms',
            '11th page p50 ms',
            'state=RUNNING p50 ms',
            'RUNNING returned',
          ],
          rows.map((r) => [
            r.records,
            r.firstPageP50Ms,
            r.firstPageP99Ms,
            r.tenthPageP50Ms,
            r.filteredP50Ms,
            r.filteredReturned,
          ]),
        ),
      );
      const first = rows[0];
      const last = rows[rows.length - 1];
      if (first && last) {
        const ratio = round(last.firstPageP50Ms / first.firstPageP50Ms, 2);
        verdicts.push({
          target: `list page at ${last.records} ≤ ${TARGETS.listPage100kOver1k}× the page at ${first.records}`,
          met: ratio <= TARGETS.listPage100kOver1k,
          measured: `${ratio}× (${last.firstPageP50Ms} ms vs ${first.firstPageP50Ms} ms)`,
        });
      }
    }
  } finally {
    await env.close();
  }
}

if (wanted('latency')) {
  const { apiLatency } = await import('./api-latency.js');
  const compareRef = args.find((a) => a.startsWith('--compare='))?.slice('--compare='.length);
  const roundsArg = args.find((a) => a.startsWith('--rounds='))?.slice('--rounds='.length);
  const rows = await apiLatency({
    levels: quick ? [1, 10] : [1, 10, 100],
    ...(compareRef ? { compareRef } : {}),
    ...(roundsArg ? { rounds: Number(roundsArg) } : {}),
  });
  results.apiLatency = rows;
  section(
    'Local API latency (npm start server in its own process; closed-loop node:http clients in another)',
    table(
      [
        'server',
        'operation',
        'connections',
        'clients',
        'requests',
        'p50 ms',
        'p99 ms',
        'requests/s',
        'server CPU ms/req',
        'client CPU ms/req',
        'load',
        'errors',
      ],
      rows.map((r) => [
        r.server,
        r.operation,
        r.connections,
        r.clients,
        r.requests,
        r.p50Ms,
        r.p99Ms,
        r.perSecond,
        r.serverCpuMsPerRequest,
        r.clientCpuMsPerRequest,
        r.loadAverage,
        r.errors,
      ]),
    ),
  );
}

section(
  'Targets',
  table(
    ['target', 'met', 'measured'],
    verdicts.map((v) => [v.target, v.met ? 'met' : 'MISSED', v.measured]),
  ),
);

const machine = {
  node: process.version,
  cpus: cpus().length,
  cpuModel: cpus()[0]?.model ?? 'unknown',
  loadAverageAtStart,
  loadAverageAtEnd: loadavg().map((l) => round(l, 2)),
};
const report = {
  generatedAt: new Date().toISOString(),
  durationSeconds: Math.round((Date.now() - started) / 1000),
  quick,
  only: only ? [...only] : 'all',
  machine,
  targets: TARGETS,
  verdicts,
  results,
};
const outArg = args.find((a) => a.startsWith('--out='));
const file = join(
  ROOT,
  'bench/results',
  outArg ? `${outArg.slice('--out='.length)}.json` : quick || only ? 'partial.json' : 'latest.json',
);
writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
progress(`wrote ${file} in ${report.durationSeconds} s`);
process.exit(0);
