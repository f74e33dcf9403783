/**
 * A real one-host Slurm cluster for the `test:slurm` suite (settings from `../shared/reference/slurm.md`):
 * munged, slurmctld, two slurmd pseudo-nodes (`n1`, `n2`, so multi-node and heterogeneous jobs run) and
 * slurmrestd on 127.0.0.1 with JWT authentication, all in a fresh temporary directory with random ports.
 *
 * Installs nothing: {@link missingBinaries} names what is absent so the suite can fail with a clear message
 * (`.ci/run` installs the Debian packages).
 */
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The daemons and clients the cluster needs, with the Debian package that ships each. */
export const REQUIRED_BINARIES: Readonly<Record<string, string>> = {
  '/usr/sbin/munged': 'munge',
  '/usr/sbin/slurmctld': 'slurmctld',
  '/usr/sbin/slurmd': 'slurmd',
  '/usr/sbin/slurmrestd': 'slurmrestd',
  '/usr/bin/scontrol': 'slurm-client',
  '/usr/bin/sinfo': 'slurm-client',
  '/usr/lib/x86_64-linux-gnu/slurm-wlm/auth_jwt.so': 'slurm-wlm-jwt-plugin',
};

/** The binaries (and their packages) that are not installed; empty when the cluster can start. */
export function missingBinaries(): string[] {
  return Object.entries(REQUIRED_BINARIES)
    .filter(([path]) => !existsSync(path))
    .map(([path, pkg]) => `${path} (Debian package ${pkg})`);
}

/** The OS user slurmrestd runs as and jobs run as (slurmrestd refuses root; `nobody` exists everywhere). */
export const CLUSTER_USER = 'nobody';
const CLUSTER_GROUP = 'nogroup';

/** A running test cluster. */
export interface SlurmCluster {
  /** The fresh directory holding configuration, state, logs and job output. */
  dir: string;
  /** A world-writable folder jobs run in (their output files land here). */
  jobsDir: string;
  /** slurmrestd's base URL, e.g. `http://127.0.0.1:40123`. */
  url: string;
  /** The cluster's JWT signing key (32 random bytes). */
  jwtKey: Buffer;
  /** The user jobs are submitted as. */
  user: string;
  /** The partition. */
  partition: string;
  /** Environment for the Slurm clients (`SLURM_CONF`). */
  env: NodeJS.ProcessEnv;
  /** Cancels every job, waits for the queue to empty and stops the daemons. */
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`test cluster: timed out waiting for ${what}`);
    await pause(200);
  }
}

async function pidOf(file: string): Promise<number | undefined> {
  try {
    const pid = Number.parseInt((await readFile(file, 'utf8')).trim(), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function terminate(pidFile: string): Promise<void> {
  const pid = await pidOf(pidFile);
  if (pid === undefined || !alive(pid)) return;
  process.kill(pid, 'SIGTERM');
  const deadline = Date.now() + 10_000;
  while (alive(pid) && Date.now() < deadline) await pause(100);
  if (alive(pid)) process.kill(pid, 'SIGKILL');
}

/**
 * Starts a cluster in a fresh temporary directory and waits until both nodes are idle and slurmrestd answers
 * its ping.
 *
 * @throws Error naming the missing binaries when Slurm is not installed.
 */
export async function startCluster(): Promise<SlurmCluster> {
  const missing = missingBinaries();
  if (missing.length > 0) {
    throw new Error(
      `the Slurm test suite needs a local Slurm installation; missing: ${missing.join(', ')}. Install with: ` +
        'apt-get install -y --no-install-recommends slurmctld slurmd slurm-client slurmrestd ' +
        'slurm-wlm-jwt-plugin munge (.ci/run does this)',
    );
  }
  if (process.getuid?.() !== 0) {
    throw new Error(
      'the Slurm test suite runs slurmctld and slurmd, which must run as root (run it as root or in CI)',
    );
  }
  const dir = await mkdtemp(join(tmpdir(), 'txs-slurm-'));
  await chmod(dir, 0o755);
  const mungeDir = join(dir, 'munge');
  const jobsDir = join(dir, 'jobs');
  for (const sub of ['munge', 'state', 'spool', 'log', 'jobs']) await mkdir(join(dir, sub), { mode: 0o755 });
  await chmod(mungeDir, 0o755);
  await chmod(jobsDir, 0o1777);
  const mungeKey = join(mungeDir, 'munge.key');
  await writeFile(mungeKey, randomBytes(1024), { mode: 0o400 });
  const jwtKey = randomBytes(32);
  const jwtKeyFile = join(dir, 'jwt.key');
  await writeFile(jwtKeyFile, jwtKey, { mode: 0o600 });
  const socket = join(mungeDir, 'munge.socket.2');

  const [ctldPort, n1Port, n2Port, restPort] = [
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  const conf = join(dir, 'slurm.conf');
  await writeFile(
    conf,
    [
      'ClusterName=txs',
      `SlurmctldHost=localhost(127.0.0.1)`,
      `SlurmctldPort=${ctldPort}`,
      'SlurmUser=root',
      'SlurmdUser=root',
      'AuthType=auth/munge',
      // cred_expire (120 s by default) is also how long a requeued job waits before it may start again
      `AuthInfo=socket=${socket},cred_expire=10`,
      'AuthAltTypes=auth/jwt',
      `AuthAltParameters=jwt_key=${jwtKeyFile}`,
      `StateSaveLocation=${join(dir, 'state')}`,
      `SlurmdSpoolDir=${join(dir, 'spool')}/%n`,
      `SlurmctldPidFile=${join(dir, 'slurmctld.pid')}`,
      `SlurmdPidFile=${join(dir, 'slurmd-%n.pid')}`,
      `SlurmctldLogFile=${join(dir, 'log', 'slurmctld.log')}`,
      `SlurmdLogFile=${join(dir, 'log', 'slurmd-%n.log')}`,
      'ProctrackType=proctrack/linuxproc',
      'TaskPlugin=task/none',
      'SelectType=select/cons_tres',
      'SelectTypeParameters=CR_Core',
      'SlurmdParameters=config_overrides',
      'AccountingStorageType=accounting_storage/none',
      'JobAcctGatherType=jobacct_gather/none',
      'JobCompType=jobcomp/none',
      'SchedulerParameters=bf_interval=1,sched_interval=1',
      'MpiDefault=none',
      'SwitchType=switch/none',
      'ReturnToService=2',
      'MinJobAge=300',
      'KillWait=2',
      `NodeName=n1 NodeHostname=localhost NodeAddr=127.0.0.1 Port=${n1Port} CPUs=2 RealMemory=2000 State=UNKNOWN`,
      `NodeName=n2 NodeHostname=localhost NodeAddr=127.0.0.1 Port=${n2Port} CPUs=2 RealMemory=2000 State=UNKNOWN`,
      'PartitionName=debug Nodes=n1,n2 Default=YES MaxTime=INFINITE State=UP',
      '',
    ].join('\n'),
  );
  const env = { ...process.env, SLURM_CONF: conf };
  const stops: string[] = [];
  const cluster: SlurmCluster = {
    dir,
    jobsDir,
    url: `http://127.0.0.1:${restPort}`,
    jwtKey,
    user: CLUSTER_USER,
    partition: 'debug',
    env,
    async stop() {
      await run('scancel', ['--full', '--user', CLUSTER_USER], { env }).catch(() => undefined);
      await run('scancel', ['--user', CLUSTER_USER], { env }).catch(() => undefined);
      await until(
        'the queue to empty',
        async () => (await run('squeue', ['-h'], { env })).stdout.trim() === '',
        20_000,
      ).catch(() => undefined);
      for (const pidFile of stops.reverse()) await terminate(pidFile);
    },
  };

  try {
    await run('/usr/sbin/munged', [
      `--key-file=${mungeKey}`,
      `--socket=${socket}`,
      `--pid-file=${join(mungeDir, 'munged.pid')}`,
      `--log-file=${join(dir, 'log', 'munged.log')}`,
      `--seed-file=${join(mungeDir, 'munged.seed')}`,
      '--force',
    ]);
    stops.push(join(mungeDir, 'munged.pid'));
    await run('/usr/sbin/slurmctld', ['-f', conf], { env });
    stops.push(join(dir, 'slurmctld.pid'));
    for (const node of ['n1', 'n2']) {
      await run('/usr/sbin/slurmd', ['-f', conf, '-N', node], { env });
      stops.push(join(dir, `slurmd-${node}.pid`));
    }
    const restPid = join(dir, 'slurmrestd.pid');
    const rest = spawn(
      '/usr/sbin/slurmrestd',
      [
        '-f',
        conf,
        '-a',
        'rest_auth/jwt',
        '-s',
        'openapi/v0.0.38',
        '-u',
        CLUSTER_USER,
        '-g',
        CLUSTER_GROUP,
        `127.0.0.1:${restPort}`,
      ],
      { env: { ...env, SLURM_JWT: 'daemon' }, stdio: ['ignore', 'ignore', 'ignore'], detached: true },
    );
    rest.unref();
    await writeFile(restPid, String(rest.pid));
    stops.push(restPid);
    await until('two idle nodes', async () => {
      const { stdout } = await run('sinfo', ['-h', '-N', '-o', '%N %t'], { env });
      return stdout.split('\n').filter((line) => / idle$/.test(line)).length === 2;
    });
    await until('slurmrestd', async () => {
      const res = await fetch(`${cluster.url}/slurm/v0.0.38/ping`, {
        headers: { 'X-SLURM-USER-NAME': CLUSTER_USER, 'X-SLURM-USER-TOKEN': await scontrolToken(env) },
      });
      return res.status === 200;
    });
  } catch (error) {
    await cluster.stop();
    const log = await readFile(join(dir, 'log', 'slurmctld.log'), 'utf8').catch(() => '');
    throw new Error(`test cluster did not start (in ${dir}): ${String(error)}\n${log.slice(-2000)}`);
  }
  return cluster;
}

/** A token from `scontrol token` (Slurm's own signer), to check ours against. */
export async function scontrolToken(env: NodeJS.ProcessEnv, user = CLUSTER_USER): Promise<string> {
  const { stdout } = await run('scontrol', ['token', `username=${user}`, 'lifespan=7200'], { env });
  const match = /SLURM_JWT=(\S+)/.exec(stdout);
  if (!match?.[1]) throw new Error(`scontrol token printed no token: ${stdout}`);
  return match[1];
}

/** Removes the cluster's directory (after {@link SlurmCluster.stop}). */
export async function removeCluster(cluster: SlurmCluster): Promise<void> {
  await rm(cluster.dir, { recursive: true, force: true });
}
