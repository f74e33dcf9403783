/**
 * `npm start`: runs the local API until interrupted. Environment: PORT (default 8080), TXS_DATA_DIR
 * (default .txs-data), TXS_IN_MEMORY=1 to keep nothing on disk, TXS_VERBOSE=1 for the handlers' JSON logs,
 * TXS_LOCAL_TOKEN_FILE (default ~/.txs/local/<port>.token) for the access token (the server's own socket,
 * `<port>.sock`, is beside it), TXS_WORKSPACE_RETENTION_DAYS (default 30) for unused workspace archives.
 */

// Before any AWS SDK or Powertools module loads: quiet the SDK's Node 20 notice, and keep the handlers'
// structured logs and EMF metrics (meant for CloudWatch) off the console unless asked for.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
if (process.env.TXS_VERBOSE !== '1') {
  process.env.POWERTOOLS_LOG_LEVEL ??= 'WARN';
  process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
}

const { startLocalServer } = await import('./server.js');
const { DataDirError } = await import('./private-files.js');
const { DiskFullError } = await import('../specs/index.js');
let server: Awaited<ReturnType<typeof startLocalServer>>;
try {
  server = await startLocalServer({ inMemory: process.env.TXS_IN_MEMORY === '1', verbose: true });
} catch (error) {
  const expected =
    error instanceof DataDirError ||
    error instanceof DiskFullError ||
    (error as NodeJS.ErrnoException).code === 'EADDRINUSE';
  if (!expected) throw error;
  console.error(`cannot start the local server: ${(error as Error).message}`);
  process.exit(1);
}
console.log(`torchx-serverless local API listening on ${server.url}`);
console.log(
  `  data:       ${server.dataDir}${process.env.TXS_IN_MEMORY === '1' ? ' (records in memory)' : ''}`,
);
console.log(
  server.socketFile === undefined
    ? `  socket:     none (${server.socketSkipped}); txs and the plugin send no environment`
    : `  socket:     ${server.socketFile} (txs and the plugin use it; curl --unix-socket needs no token)`,
);
console.log(`  token:      ${server.tokenFile} (for curl over TCP; same-user curl needs none on Linux)`);
// The dashboard's one-time link: how a browser gets in where the server cannot read its OS user (macOS,
// Windows); on Linux the same user's browser is admitted at the plain address too.
console.log(`  dashboard:  ${server.newDashboardLink()} (works once; txs ui prints a new one)`);
console.log(
  '  schedulers: local_cwd (runs jobs on this machine), aws_batch and aws_sagemaker (dryrun offline), slurm ' +
    '(runs with TXS_SLURM_URL), local_docker, lsf, kubernetes, kubernetes_mcad (dryrun; see docs/schedulers.md)',
);
// txs reads TXS_ENDPOINT (default http://127.0.0.1:8080): name it when PORT moved the server elsewhere.
const txs = server.port === 8080 ? 'npx txs' : `TXS_ENDPOINT=${server.url} npx txs`;
console.log(`  try:        curl -s ${server.url}/v1/components   or   ${txs} run --wait utils.echo --msg hi`);

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  console.log('\nstopping…');
  await server.close();
  process.exit(0);
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
