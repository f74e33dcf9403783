// Cold-init probe, run by bench/cold-init.ts in a fresh `node` per measurement:
//   node bench/probe.mjs <bundle.mjs> import            → import the bundle only
//   node bench/probe.mjs <bundle.mjs> invoke <event>    → import it, then invoke its handler once
// The invocation builds the function's clients (the container is lazy) and sends every AWS request its route
// makes to a loopback stub (bench/lib/aws-stub.ts) that answers each at once with a valid response, so the
// whole success path is measured and no network wait is.
// Prints {importMs, invokeMs, cpuMs, status?, body?}: in-process times, the process's CPU time so far, and an
// API function's HTTP status (the bench rejects a failed first invocation).
// With TXS_PROBE_INVENTORY=1 (never in a timed run) it also prints `loadedFiles`: every file the import and
// the invocation loaded (module hooks in bench/probe-hooks.mjs).
import { fileURLToPath, pathToFileURL } from 'node:url';

const [bundle, mode, eventJson] = process.argv.slice(2);
const loadedFiles = [];
let inventory;
if (process.env.TXS_PROBE_INVENTORY === '1') {
  const { register } = await import('node:module');
  const { MessageChannel } = await import('node:worker_threads');
  inventory = new MessageChannel();
  inventory.port1.on('message', (url) => loadedFiles.push(fileURLToPath(url)));
  inventory.port1.unref();
  register('./probe-hooks.mjs', import.meta.url, {
    data: { port: inventory.port2 },
    transferList: [inventory.port2],
  });
}
let reply;
const t0 = performance.now();
const mod = await import(pathToFileURL(bundle).href);
const t1 = performance.now();
if (mode === 'invoke') {
  const context = {
    functionName: 'bench',
    awsRequestId: 'bench',
    invokedFunctionArn: 'arn:aws:lambda:us-east-1:000000000000:function:bench',
    getRemainingTimeInMillis: () => 30000,
  };
  reply = await mod.handler(JSON.parse(eventJson), context);
}
const t2 = performance.now();
const cpu = process.cpuUsage();
// The hooks thread posts each URL before the module loads: one turn of the event loop delivers the last ones.
if (inventory) await new Promise((resolve) => setTimeout(resolve, 50));
process.stderr.write(
  `${JSON.stringify({
    importMs: t1 - t0,
    invokeMs: t2 - t1,
    cpuMs: (cpu.user + cpu.system) / 1000,
    ...(inventory ? { loadedFiles } : {}),
    ...(typeof reply?.statusCode === 'number' ? { status: reply.statusCode, body: reply.body } : {}),
  })}\n`,
);
process.exit(0);
