/**
 * `npm run bench:cli`: start-up and round trips of the `txs` command as installed (the prebuilt
 * dist/cli/main.js, `npm run build` first), against bare Node.js and TorchX's own CLI, measured alternately
 * in one run (each round runs every command once, so load changes hit all of them alike):
 *
 * - `node -e 0` · `txs --help` · `torchx --help`
 * - `txs run --dryrun -s aws_batch -cfg queue=q dist.ddp -j 2x8 --script train.py` against the local server
 *   (started in this process) · `torchx run --dryrun -s aws_batch -cfg queue=q dist.ddp …` (TorchX 0.8.0dev0,
 *   the last one with aws_batch, from ../shared/vendor; see its README)
 *
 * Also counts the HTTP requests one `txs run --dryrun -cfg …` makes. Prints medians and writes
 * bench/results/cli.json. Usage: `npm run bench:cli [-- --rounds=15]`.
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

const ROUNDS = roundsArg(15);

const DDP = ['-s', 'aws_batch', '-cfg', 'queue=q', 'dist.ddp', '-j', '2x8', '--script', 'train.py'];

if (!existsSync(join(ROOT, 'dist/cli/main.js'))) {
  console.error('dist/cli/main.js is missing: run `npm run build` first');
  process.exit(1);
}

// A counting pass-through in front of the server: how many requests one `txs run` makes.
let requests = 0;
const served = await proxiedLocalServer('cli', () => {
  requests++;
});
const { work } = served;
const proxyUrl = served.url;

const txsEnv = { ...process.env, TXS_PREBUILT: '1', TXS_ENDPOINT: proxyUrl, TXS_CONFIG: '/dev/null' };
const torchxEnv = {
  ...process.env,
  PYTHONPATH: `${join(VENDOR, 'torchx-b72ba03')}:${join(VENDOR, 'docstring_parser')}`,
  AWS_DEFAULT_REGION: 'us-east-1',
  PYTHONWARNINGS: 'ignore',
};
const torchx = ['/usr/bin/python3', ['-m', 'torchx.cli.main']] as const;
const txs = [process.execPath, [join(ROOT, 'bin/txs.js')]] as const;

const COMMANDS: Record<string, TimedCommand> = {
  'node -e 0': { file: process.execPath, args: ['-e', '0'], env: process.env },
  'txs --help': { file: txs[0], args: [...txs[1], '--help'], env: txsEnv },
  'torchx --help': { file: torchx[0], args: [...torchx[1], '--help'], env: torchxEnv },
  'txs run --dryrun (local server)': {
    file: txs[0],
    args: [...txs[1], 'run', '--dryrun', ...DDP],
    env: txsEnv,
  },
  'torchx run --dryrun': {
    file: torchx[0],
    args: [...torchx[1], 'run', '--workspace', '', '--dryrun', ...DDP],
    env: torchxEnv,
  },
};

requests = 0;
await timeCommand(
  'txs run --dryrun (local server)',
  COMMANDS['txs run --dryrun (local server)'] ?? { file: '', args: [], env: {} },
  work,
);
const requestsPerRun = requests;
const medians = await alternateMedians(COMMANDS, ROUNDS, work);
await served.close();

const ratio = (a: string, b: string) => Math.round(((medians[a] ?? 0) / (medians[b] ?? 1)) * 100) / 100;
const result = {
  generatedAt: new Date().toISOString(),
  rounds: ROUNDS,
  medianMs: medians,
  helpOverBareNode: ratio('txs --help', 'node -e 0'),
  helpOverTorchx: ratio('txs --help', 'torchx --help'),
  dryrunOverTorchx: ratio('txs run --dryrun (local server)', 'torchx run --dryrun'),
  httpRequestsPerTxsRunWithCfg: requestsPerRun,
};
console.table(medians);
console.log(JSON.stringify(result, null, 2));
writeFileSync(join(ROOT, 'bench/results/cli.json'), `${JSON.stringify(result, null, 2)}\n`);
