/**
 * `txs run -s slurm --workspace DIR` on a real Slurm cluster (cluster.ts), through the real local server and
 * the `txs` CLI: the directory is packed and uploaded, the server unpacks it into `job_dir` before
 * submitting, and the job starts there and reads its files. Its own cluster and server, because the Slurm
 * user here is the server's own OS user (root: it writes into the `job_dir` the server creates, as with
 * TorchX), where the other file submits as `nobody`.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExitCode, main } from '../../lib/cli/index.js';
import type { LocalServer } from '../../lib/local/server.js';
import { memoryIO } from '../unit/cli/helpers.js';
import { removeCluster, type SlurmCluster, startCluster } from './cluster.js';

let cluster: SlurmCluster;
let server: LocalServer;

beforeAll(async () => {
  cluster = await startCluster();
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
  process.env.TXS_SLURM_URL = cluster.url;
  process.env.TXS_SLURM_USER = 'root';
  process.env.TXS_SLURM_JWT_KEY_FILE = join(cluster.dir, 'jwt.key');
  process.env.TXS_SLURM_WORKDIR = cluster.jobsDir;
  const { startLocalServer } = await import('../../lib/local/server.js');
  server = await startLocalServer({
    port: 0,
    dataDir: join(cluster.dir, 'txs'),
    inMemory: true,
    reconcileEveryMs: 0,
    schedulers: ['slurm'],
  });
}, 90_000);

afterAll(async () => {
  await server?.close();
  if (cluster) {
    await cluster.stop();
    await removeCluster(cluster);
  }
}, 60_000);

async function txs(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const io = memoryIO({
    env: { TXS_ENDPOINT: server.url, TXS_USER: 'slurm-ws', XDG_CACHE_HOME: join(cluster.dir, 'cache') },
    cwd: cluster.dir,
    home: cluster.dir,
  });
  const code = await main(args, io);
  return { code, out: io.out(), err: io.errText() };
}

describe('txs run -s slurm --workspace on a real cluster', () => {
  it('unpacks the directory into job_dir before submitting; the job starts there, reads its files and not later edits', async () => {
    const src = join(cluster.dir, 'project');
    await mkdir(join(src, 'conf'), { recursive: true });
    await writeFile(join(src, 'conf', 'lr.txt'), 'lr=0.1\n');
    const jobDir = join(cluster.jobsDir, 'train-1');
    const run = await txs(
      'run',
      '-s',
      'slurm',
      '--workspace',
      src,
      '-cfg',
      `job_dir=${jobDir}`,
      'utils.sh',
      'sh',
      '-c',
      'echo "$(cat conf/lr.txt) in $(pwd)"',
    );
    expect(run.code, run.err).toBe(ExitCode.OK);
    const handle = run.out.trim().split('\n').at(-1) ?? '';
    expect(handle).toMatch(/^slurm:\/\/torchx\/sh-\w+$/);
    await writeFile(join(src, 'conf', 'lr.txt'), 'lr=0.9\n');
    let status = '';
    for (
      let i = 0;
      i < 240 && !status.includes('State: SUCCEEDED') && !status.includes('State: FAILED');
      i++
    ) {
      status = (await txs('status', handle, '--refresh')).out;
      await delay(250);
    }
    expect(status).toContain('State: SUCCEEDED');
    const log = await txs('log', `${handle}/sh/0`, '--streams', 'stdout');
    expect(log.out).toContain(`lr=0.1 in ${jobDir}`);
  });

  it('refuses a workspace run without job_dir, naming cfg.job_dir, and gives no handle', async () => {
    const src = join(cluster.dir, 'project');
    const run = await txs('run', '-s', 'slurm', '--workspace', src, 'utils.echo', '--msg', 'x');
    expect(run.code).not.toBe(ExitCode.OK);
    expect(run.err).toContain('cfg.job_dir');
    expect(run.out).not.toMatch(/slurm:\/\//);
  });
});
