/**
 * `npm start`: runs the local API until interrupted. Environment: PORT (default 8080), TXS_DATA_DIR
 * (default .txs-data), TXS_IN_MEMORY=1 to keep nothing on disk, TXS_VERBOSE=1 for the handlers' JSON logs.
 */

// Before any AWS SDK or Powertools module loads: quiet the SDK's Node 20 notice, and keep the handlers'
// structured logs and EMF metrics (meant for CloudWatch) off the console unless asked for.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
if (process.env.TXS_VERBOSE !== '1') {
  process.env.POWERTOOLS_LOG_LEVEL ??= 'WARN';
  process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
}

const { startLocalServer } = await import('./server.js');
const server = await startLocalServer({ inMemory: process.env.TXS_IN_MEMORY === '1', verbose: true });
console.log(`torchx-serverless local API listening on ${server.url}`);
console.log(
  `  data:       ${server.dataDir}${process.env.TXS_IN_MEMORY === '1' ? ' (records in memory)' : ''}`,
);
console.log(
  '  schedulers: local_cwd (runs jobs on this machine), aws_batch and aws_sagemaker (dryrun offline), ' +
    'local_docker, lsf, kubernetes, kubernetes_mcad (dryrun only)',
);
console.log(
  `  try:        curl -s ${server.url}/v1/components   or   npx txs run --wait -s local_cwd utils.echo --msg hi`,
);

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
