/**
 * `npx tsx bench/cold-ab.ts --baseline=<dir> [--rounds=15] [--only=List,StateChange]`: cold init of this
 * tree's function bundles against another build of them (`<dir>/<Function>/index.mjs`, e.g. an older commit's),
 * alternately in one run, each process as cold-init.ts runs it (import + first invocation against the loopback
 * AWS stub, a sampled X-Ray trace, a loopback daemon), plus this tree's bundles with the invocation not sampled.
 * Prints medians over bare node (wall / CPU) and writes bench/results/cold-ab.json.
 *
 * A baseline from another commit:
 *   git archive <ref> | tar -x -C /tmp/base && ln -s "$PWD/node_modules" /tmp/base/node_modules
 *   (cd /tmp/base && node --import tsx -e "await (await import('./bench/bundling.ts')).buildBundles('/tmp/base-bundles')")
 * (the baseline's own dependencies must be in that node_modules).
 */
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildBundles, ROOT } from './bundling.js';
import {
  BARE,
  firstEvent,
  type ProcessSample,
  probeEnv,
  SAMPLED_TRACE_HEADER,
  stubRecord,
  timeProcess,
} from './cold-init.js';
import { startAwsStub } from './lib/aws-stub.js';
import { median, progress, round } from './lib/stats.js';
import { startXrayDaemonStub } from './lib/xray-daemon-stub.js';

const option = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const baseline = option('baseline');
if (baseline === undefined) {
  console.error('usage: npx tsx bench/cold-ab.ts --baseline=<dir of bundles> [--rounds=15] [--only=A,B]');
  process.exit(2);
}
const rounds = Number(option('rounds') ?? 15);
progress('building this tree’s bundles');
const current = await buildBundles(join(tmpdir(), `txs-bench-ab-${process.pid}`));
const only = option('only')?.split(',');
const bundles = current.filter((b) => only === undefined || only.includes(b.name));

const stub = await startAwsStub(stubRecord(), 'ml-gpu-queue');
const daemon = await startXrayDaemonStub();
const sampled = probeEnv(stub.url, daemon.address);
const notSampled = { ...sampled, _X_AMZN_TRACE_ID: SAMPLED_TRACE_HEADER.replace('Sampled=1', 'Sampled=0') };
const probe = join(ROOT, 'bench/probe.mjs');
const variants = [
  { name: 'baseline', file: (name: string) => join(baseline, name, 'index.mjs'), env: sampled },
  {
    name: 'this tree',
    file: (name: string) => current.find((b) => b.name === name)?.file ?? '',
    env: sampled,
  },
  {
    name: 'this tree, not sampled',
    file: (name: string) => current.find((b) => b.name === name)?.file ?? '',
    env: notSampled,
  },
];
const bare: ProcessSample[] = [];
const samples = new Map<string, ProcessSample[]>();
for (let round = 0; round < rounds; round++) {
  progress(`round ${round + 1}/${rounds}`);
  for (const b of bundles) {
    bare.push(await timeProcess(BARE, sampled));
    for (const v of variants) {
      const key = `${b.name}\t${v.name}`;
      const event = JSON.stringify(firstEvent(b.name));
      samples.set(key, [
        ...(samples.get(key) ?? []),
        await timeProcess([probe, v.file(b.name), 'invoke', event], v.env),
      ]);
    }
  }
}
await stub.close();
await daemon.close();

const bareWall = median(bare.map((s) => s.wallMs));
const bareCpu = median(bare.map((s) => s.cpuMs));
const result = {
  generatedAt: new Date().toISOString(),
  baseline,
  rounds,
  bareNode: { wallMs: round(bareWall), cpuMs: round(bareCpu) },
  /** Per function and variant: median import + first invocation over bare node. */
  functions: Object.fromEntries(
    bundles.map((b) => [
      b.name,
      Object.fromEntries(
        variants.map((v) => {
          const s = samples.get(`${b.name}\t${v.name}`) ?? [];
          return [
            v.name,
            {
              wallMs: round(median(s.map((x) => x.wallMs)) - bareWall),
              cpuMs: round(median(s.map((x) => x.cpuMs)) - bareCpu),
            },
          ];
        }),
      ),
    ]),
  ),
};
console.log(
  `ms over bare node (${result.bareNode.wallMs} ms wall, ${result.bareNode.cpuMs} ms CPU), wall / CPU, median of ${rounds}`,
);
for (const [name, figures] of Object.entries(result.functions)) {
  console.log(
    `${name.padEnd(12)} ${Object.entries(figures)
      .map(([v, f]) => `${v}: ${f.wallMs} / ${f.cpuMs}`)
      .join(' | ')}`,
  );
}
writeFileSync(join(ROOT, 'bench/results/cold-ab.json'), `${JSON.stringify(result, null, 2)}\n`);
