// Cold-init probe, run by bench/cold-init.ts in a fresh `node` per measurement:
//   node bench/probe.mjs <bundle.mjs> import            → import the bundle only
//   node bench/probe.mjs <bundle.mjs> invoke <event>    → import it, then invoke its handler once
// The invocation builds the function's clients (the container is lazy) and sends its first AWS request to a
// loopback stub that answers at once with a non-retryable error, so no network wait is measured.
// Prints {importMs, invokeMs, cpuMs}: in-process times and the process's CPU time so far.
import { pathToFileURL } from 'node:url';

const [bundle, mode, eventJson] = process.argv.slice(2);
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
  try {
    await mod.handler(JSON.parse(eventJson), context);
  } catch {
    // Event functions rethrow store failures (EventBridge retries them); the stub caused this one.
  }
}
const t2 = performance.now();
const cpu = process.cpuUsage();
process.stderr.write(
  `${JSON.stringify({ importMs: t1 - t0, invokeMs: t2 - t1, cpuMs: (cpu.user + cpu.system) / 1000 })}\n`,
);
process.exit(0);
