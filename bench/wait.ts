/**
 * `npm run bench:wait`: wall time of waiting for a job that ends at once, `txs run --wait utils.echo`
 * against the local server (started in this process) beside TorchX's own
 * `torchx run -s local_cwd --wait utils.echo` (the newest TorchX, from ../shared/vendor; see its README),
 * and `txs run utils.echo` (no wait) for the cost of submitting alone. Commands run alternately, one of each
 * per round, so load changes hit all of them alike. Also counts the status requests one `txs run --wait`
 * makes, and whether the server held them (`Long-Polled: true`).
 *
 * `txs` is the prebuilt CLI when dist/cli/main.js exists (`npm run build`), else the sources through tsx
 * (slower to start; the result says which). Prints medians and writes bench/results/wait.json.
 * Usage: `npm run bench:wait [-- --rounds=10]`.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  alternateMedians,
  proxiedLocalServer,
  ROOT,
  roundsArg,
  type TimedCommand,
  timeCommand,
  VENDOR,
} from './lib/commands.js';
import { round } from './lib/stats.js';

const ROUNDS = roundsArg(10);

const PREBUILT = existsSync(join(ROOT, 'dist/cli/main.js'));

// A counting pass-through in front of the server: the status requests of one `txs run --wait`.
let statusRequests = 0;
let heldRequests = 0;
const served = await proxiedLocalServer('wait', (req, answer) => {
  if (req.method !== 'GET' || !/^\/v1\/apps\/[^/]+\/[^/?]+(\?|$)/.test(req.url ?? '')) return;
  statusRequests++;
  if (answer.headers['long-polled'] === 'true') heldRequests++;
});
const { work } = served;
const proxyUrl = served.url;

const txsEnv = {
  ...process.env,
  ...(PREBUILT ? { TXS_PREBUILT: '1' } : {}),
  TXS_ENDPOINT: proxyUrl,
  TXS_CONFIG: '/dev/null',
};
const torchxEnv = {
  ...process.env,
  PYTHONPATH: `${join(VENDOR, 'torchx')}:${join(VENDOR, 'docstring_parser')}`,
  PYTHONWARNINGS: 'ignore',
};
const txs = [process.execPath, [join(ROOT, 'bin/txs.js')]] as const;
const ECHO = ['utils.echo', '--msg', 'hi'];

const COMMANDS: Record<string, TimedCommand> = {
  'txs run utils.echo (no wait)': { file: txs[0], args: [...txs[1], 'run', ...ECHO], env: txsEnv },
  'txs run --wait utils.echo': { file: txs[0], args: [...txs[1], 'run', '--wait', ...ECHO], env: txsEnv },
  'torchx run -s local_cwd --wait utils.echo': {
    file: '/usr/bin/python3',
    args: ['-m', 'torchx.cli.main', 'run', '-s', 'local_cwd', '--wait', ...ECHO],
    env: torchxEnv,
  },
};

const time = (name: string) => timeCommand(name, COMMANDS[name] ?? { file: '', args: [], env: {} }, work);

// One warm-up run of each (module caches, the server's first requests), which also counts the requests.
for (const name of Object.keys(COMMANDS)) {
  statusRequests = 0;
  heldRequests = 0;
  await time(name);
}
statusRequests = 0;
heldRequests = 0;
await time('txs run --wait utils.echo');
const perWait = { statusRequests, heldByServer: heldRequests };

const medians = await alternateMedians(COMMANDS, ROUNDS, work);
await served.close();

const result = {
  generatedAt: new Date().toISOString(),
  rounds: ROUNDS,
  txs: PREBUILT ? 'prebuilt dist/cli/main.js' : 'sources through tsx (no dist/: run `npm run build` first)',
  medianMs: medians,
  waitOverhead: {
    /** What --wait adds to a plain run: the status requests until the app's end is seen. */
    txsMs: (medians['txs run --wait utils.echo'] ?? 0) - (medians['txs run utils.echo (no wait)'] ?? 0),
  },
  waitOverTorchx: round(
    (medians['txs run --wait utils.echo'] ?? 0) / (medians['torchx run -s local_cwd --wait utils.echo'] ?? 1),
    2,
  ),
  statusRequestsPerTxsRunWait: perWait,
};
console.table(medians);
console.log(JSON.stringify(result, null, 2));
writeFileSync(join(ROOT, 'bench/results/wait.json'), `${JSON.stringify(result, null, 2)}\n`);
