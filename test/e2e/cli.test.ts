/**
 * End to end: the `txs` CLI against the real local server (local_cwd scheduler, in-memory store), with
 * real processes and real time.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExitCode } from '../../lib/cli/index.js';
import type { LocalServer } from '../../lib/local/server.js';
import { validateResponses } from '../helpers/openapi-validator.js';
import { runTxs } from '../helpers/real-time-cli.js';

let server: LocalServer;
let dataDir: string;

// Every response these tests receive must match docs/openapi.json.
const { transport } = validateResponses(() => server?.url);

beforeAll(async () => {
  // EMF metrics are meant for CloudWatch; keep them off the test output (as `npm start` does).
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
  dataDir = await mkdtemp(join(tmpdir(), 'txs-cli-e2e-'));
  const { startLocalServer } = await import('../../lib/local/server.js');
  server = await startLocalServer({
    port: 0,
    dataDir,
    inMemory: true,
    reconcileEveryMs: 0,
    tokenFile: join(dataDir, 'run', 'server.token'),
  });
});

afterAll(async () => {
  await server?.close();
  await rm(dataDir, { recursive: true, force: true });
});

/** Runs txs in-process against the local server, in real time, capturing its output. */
function txs(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  // The caller's environment is the job's (as in TorchX): without PATH, echo would not be found. It goes
  // through the server's own socket, found beside its token file.
  return runTxs(args, {
    env: { TXS_ENDPOINT: server.url, TXS_USER: 'cli-e2e', TXS_LOCAL_TOKEN_FILE: server.tokenFile },
    cwd: dataDir,
    homeDir: dataDir,
    transport,
  });
}

describe('txs against the local server', () => {
  it('fails an aws_batch run on a server without AWS at once: exit 78, the fix, one request and one record', async () => {
    const saved = { region: process.env.AWS_REGION, defaultRegion: process.env.AWS_DEFAULT_REGION };
    delete process.env.AWS_REGION;
    delete process.env.AWS_DEFAULT_REGION;
    try {
      // No workspace (the default for aws_batch would ship the current directory): one request.
      const run = await txs(
        'run',
        '--workspace',
        '',
        '-s',
        'aws_batch',
        '--cfg',
        'queue=q',
        'utils.echo',
        '--msg',
        'no aws',
      );
      expect(run.code).toBe(ExitCode.CONFIG);
      expect(run.err).toMatch(/hint: .*AWS_REGION/);
      const list = await txs('list', '-s', 'aws_batch', '--json');
      const apps = (JSON.parse(list.out) as { apps: Array<{ state: string }> }).apps;
      expect(apps.map((a) => a.state)).toEqual(['FAILED']);
    } finally {
      if (saved.region !== undefined) process.env.AWS_REGION = saved.region;
      if (saved.defaultRegion !== undefined) process.env.AWS_DEFAULT_REGION = saved.defaultRegion;
    }
  });

  it('runs utils.echo with --wait, then shows its log, status, description and listing', async () => {
    const run = await txs('run', '--wait', 'utils.echo', '--msg', 'hello from txs');
    expect(run.code).toBe(ExitCode.OK);
    const handle = run.out.trim();
    expect(handle).toMatch(/^local_cwd:\/\/torchx\/echo-\w+$/);
    expect(run.err).toMatch(/\d+\.\ds {2}SUCCEEDED/);

    const log = await txs('log', handle);
    expect(log.code).toBe(ExitCode.OK);
    expect(log.out).toBe('hello from txs\n');

    const status = await txs('status', handle);
    expect(status.out).toContain('State: SUCCEEDED');

    const describeOut = await txs('describe', handle);
    expect(describeOut.out).toContain('entrypoint: echo');

    const list = await txs('list');
    expect(list.out).toMatch(new RegExp(`${handle.replace(/[/.]/g, '\\$&')}\\s+SUCCEEDED\\s+echo`));
  });

  it('streams the logs while waiting with --log', async () => {
    const run = await txs('run', '--log', 'utils.echo', '--msg', 'streamed');
    expect(run.code).toBe(ExitCode.OK);
    expect(run.err).toContain('streamed\n');
  });

  it('exits 1 when the app fails', async () => {
    const run = await txs('run', '--wait', 'utils.sh', 'exit', '3');
    expect(run.code).toBe(ExitCode.APP_FAILED);
    expect(run.err).toContain('FAILED');
  });

  it('shows the last lines of the failing replica’s stderr in --wait and status', async () => {
    const run = await txs(
      'run',
      '--wait',
      'utils.sh',
      'sh',
      '-c',
      'echo "bash: torchrun: command not found" >&2; exit 127',
    );
    expect(run.code).toBe(ExitCode.APP_FAILED);
    expect(run.err).toContain('exited with code 127');
    expect(run.err).toContain('bash: torchrun: command not found');
    const handle = run.out.trim();
    const status = await txs('status', handle);
    expect(status.out).toContain('bash: torchrun: command not found');
  });

  it('prints a component’s help for `run <component> --help`, and a did-you-mean for a typo, listing builtins once', async () => {
    const help = await txs('run', 'dist.ddp', '--help');
    expect(help.code).toBe(ExitCode.OK);
    expect(help.out).toContain('dist.ddp');
    expect(help.out).toContain('--script');
    const typo = await txs('run', 'utils.ech');
    expect(typo.code).toBe(ExitCode.USAGE);
    expect(typo.err).toContain('did you mean utils.echo?');
    expect(typo.err.match(/utils\.sh/g)).toHaveLength(1);
  });

  it('names an unknown scheduler for list -s and for a handle, listing the schedulers once', async () => {
    for (const args of [
      ['list', '-s', 'bogus'],
      ['status', 'bogus://torchx/x'],
    ]) {
      const { code, err } = await txs(...args);
      expect(code).toBe(ExitCode.USAGE);
      expect(err).toContain('Scheduler backend: bogus does not exist');
      expect(err.match(/local_cwd/g)).toHaveLength(1);
      expect(err).not.toContain('no apps');
    }
  });

  it('cancels a running app', async () => {
    const run = await txs('run', 'utils.sh', 'sleep', '60');
    expect(run.code).toBe(ExitCode.OK);
    const handle = run.out.trim();
    const cancel = await txs('cancel', handle);
    expect(cancel.code).toBe(ExitCode.OK);
    expect(cancel.out).toContain(`cancel requested for ${handle}`);
    const wait = await txs('wait', handle);
    expect(wait.code).toBe(ExitCode.APP_FAILED);
    expect(wait.err).toContain('CANCELLED');
  });

  it('counts the apps per state with list --counts, agreeing with the listing', async () => {
    const apps = JSON.parse((await txs('list', '--json', '--limit', '1000')).out).apps as { state: string }[];
    const expected: Record<string, number> = {};
    for (const app of apps) expected[app.state] = (expected[app.state] ?? 0) + 1;
    const json = await txs('list', '--counts', '--json');
    expect(JSON.parse(json.out)).toEqual({ counts: expected, counted: apps.length, complete: true });
    const table = await txs('list', '--counts', '--state', 'SUCCEEDED');
    expect(table.code).toBe(ExitCode.OK);
    expect(table.out).toMatch(
      new RegExp(`^STATE +APPS\n-+ +-+\nSUCCEEDED +${expected.SUCCEEDED}\ntotal +${apps.length}\n$`),
    );
  });

  it('prints a dry run without submitting', async () => {
    const before = await txs('list', '--json');
    const dryrun = await txs('run', '--dryrun', 'utils.echo', '--msg', 'dry');
    expect(dryrun.code).toBe(ExitCode.OK);
    expect(dryrun.out).toContain('=== SCHEDULER REQUEST ===');
    const after = await txs('list', '--json');
    expect(JSON.parse(after.out).apps).toHaveLength(JSON.parse(before.out).apps.length);
  });

  it('says "unknown app" with exit 3', async () => {
    const status = await txs('status', 'local_cwd://torchx/no-such-app');
    expect(status.code).toBe(ExitCode.NOT_FOUND);
    expect(status.err).toContain('error: unknown app local_cwd://torchx/no-such-app');
  });

  it('shows the run options and builtins the server offers', async () => {
    expect((await txs('runopts', 'local_cwd')).out).toContain('local_cwd:');
    expect((await txs('builtins')).out).toContain('utils.echo');
  });

  it("dry-runs slurm with TorchX's hyphenated options and prints TorchX's sbatch script", async () => {
    const runopts = await txs('runopts', 'slurm');
    expect(runopts.out).toContain('mail-user');
    const dry = await txs(
      'run',
      '--dryrun',
      '-s',
      'slurm',
      '-cfg',
      'partition=gpu,mail-user=a@example.com',
      'utils.echo',
    );
    expect(dry.code).toBe(ExitCode.OK);
    expect(dry.out).toContain('sbatch --parsable --mail-user=a@example.com $SBATCH_SCRIPT');
    expect(dry.out).toContain('#SBATCH --job-name=echo-0 --requeue --partition=gpu');
  });
});
