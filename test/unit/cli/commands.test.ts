import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ExitCode, main, normalizeRunArgv } from '../../../lib/cli/index.js';
import { terminalIO } from '../../../lib/cli/terminal-text.js';
import { MAX_REPLICA_TEXT_BYTES, truncateErrorDocument } from '../../../lib/store/bounds.js';
import { type FakeApi, startFakeApi } from './fake-api.js';
import { closedPort, type MemoryIO, memoryIO } from './helpers.js';

let api: FakeApi;
beforeEach(async () => {
  api = await startFakeApi();
});
afterEach(async () => {
  await api.close();
});

/** Runs txs against the fake API. */
async function txs(
  args: string[],
  io: MemoryIO = memoryIO(),
): Promise<{ code: number; out: string; err: string; io: MemoryIO }> {
  // The fake API has its own socket as the local server does: it counts as the caller's own server.
  const code = await main(args, {
    ...io,
    env: { TXS_ENDPOINT: api.url, ...api.ownSocketEnv, ...io.env },
  } as MemoryIO);
  return { code, out: io.out(), err: io.errText(), io };
}

const posted = (path: string) => api.requests.filter((r) => r.method === 'POST' && r.path === path);

describe('txs run', () => {
  it('submits the component and its arguments verbatim, printing the handle', async () => {
    const { code, out } = await txs(['run', 'utils.echo', '--msg', 'hello world', '--wait', '--', '-x']);
    expect(code).toBe(ExitCode.OK);
    expect(out).toBe('local_cwd://torchx/echo-1\n');
    expect(posted('/v1/apps')[0]?.body).toEqual({
      scheduler: 'local_cwd',
      cfg: { cwd: '/work/project', env: { TXS_ENDPOINT: api.url, ...api.ownSocketEnv } },
      component: 'utils.echo',
      args: ['--msg', 'hello world', '--wait', '--', '-x'],
    });
  });

  it("sends local_cwd jobs the caller's working directory and environment unless -cfg sets them", async () => {
    const io = memoryIO({ cwd: '/home/me/exp', env: { LOGLEVEL: 'INFO', MY_VAR: 'x' } });
    await txs(['run', 'utils.echo'], io);
    expect(posted('/v1/apps')[0]?.body).toMatchObject({
      cfg: {
        cwd: '/home/me/exp',
        env: { LOGLEVEL: 'INFO', MY_VAR: 'x', TXS_ENDPOINT: api.url, ...api.ownSocketEnv },
      },
    });
    await txs(['run', '-cfg', 'cwd=/data,env=A:1', 'utils.echo'], memoryIO({ cwd: '/home/me/exp' }));
    expect(posted('/v1/apps')[1]?.body).toMatchObject({ cfg: { cwd: '/data', env: { A: '1' } } });
    await txs(['run', '--workspace', '', '-s', 'aws_batch', '-cfg', 'queue=q', 'utils.echo'], io);
    expect(posted('/v1/apps')[2]?.body).toEqual(expect.objectContaining({ cfg: { queue: 'q' } }));
  });

  it('sends neither the environment nor the working directory to a server not proven the caller’s (a .txsconfig pointing elsewhere)', async () => {
    // No own socket for this endpoint: a cloned repository's .txsconfig names a server that is not ours.
    const io = memoryIO({
      cwd: '/home/me/clone',
      env: { AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI-secret' },
      files: { '/home/me/clone/.txsconfig': `[txs]\nendpoint = ${api.url}\n` },
    });
    for (const args of [
      ['run', 'utils.echo'],
      ['run', '--dryrun', 'utils.echo'],
    ]) {
      expect(await main(args, io)).toBe(ExitCode.OK);
    }
    const sent = api.requests.filter((r) => r.method === 'POST');
    expect(sent.map((r) => r.path)).toEqual(['/v1/apps', '/v1/dryrun']);
    for (const request of sent) {
      expect(request.body).toEqual({ scheduler: 'local_cwd', component: 'utils.echo', args: [] });
      expect(JSON.stringify(request)).not.toContain('wJalrXUtnFEMI-secret');
    }
    expect(io.errText()).toContain(
      `warning: ${api.url} is not proven to be your own local server (no local server socket at`,
    );
  });

  it('refuses -cfg env for a server not proven the caller’s, naming why, with nothing submitted', async () => {
    const io = memoryIO({ env: { TXS_ENDPOINT: api.url } });
    const code = await main(['run', '-cfg', 'env=TOKEN:abc', 'utils.echo'], io);
    expect(code).toBe(ExitCode.USAGE);
    expect(io.errText()).toContain(
      `error: cfg env is sent only to your own local server, and ${api.url} is not proven to be yours`,
    );
    expect(io.errText()).toContain('hint: run against the local server you started');
    expect(api.requests.filter((r) => r.method === 'POST')).toEqual([]);
  });

  it("prints the API's warnings on stderr, for a run and a dry run", async () => {
    api.nextRun = {
      warnings: ['`prioirty` is not a run option of local_cwd; ignoring it; did you mean `priority`?'],
    };
    for (const args of [
      ['run', 'utils.echo'],
      ['run', '--dryrun', 'utils.echo'],
    ]) {
      const { code, err } = await txs(args);
      expect(code).toBe(ExitCode.OK);
      expect(err).toContain(
        'warning: `prioirty` is not a run option of local_cwd; ignoring it; did you mean `priority`?',
      );
    }
  });

  it('warns about a -cfg key that is not a run option with the closest name', async () => {
    const typo = await txs([
      'run',
      '--workspace',
      '',
      '-s',
      'aws_batch',
      '-cfg',
      'queue=q,prioirty=1',
      'utils.echo',
    ]);
    expect(typo.err).toContain(
      'warning: `prioirty` is not a run option of aws_batch; ignoring it; did you mean `priority`?',
    );
  });

  it('sends a fresh Idempotency-Key per run, or the one given', async () => {
    await txs(['run', 'utils.echo']);
    await txs(['run', '--idempotency-key', 'deploy-42', 'utils.echo']);
    const keys = posted('/v1/apps').map((r) => r.headers['idempotency-key']);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toBe('deploy-42');
  });

  it('parses -cfg with the scheduler’s declared types and merges .txsconfig defaults under it', async () => {
    const io = memoryIO({
      files: { '/work/project/.txsconfig': '[aws_batch]\nqueue = from-file\npriority = 1\n' },
    });
    const { code, err } = await txs(
      [
        'run',
        '--workspace',
        '',
        '-s',
        'aws_batch',
        '-cfg',
        'priority=7,colour=red',
        'utils.echo',
        '-cfg',
        'x',
      ],
      io,
    );
    expect(code).toBe(ExitCode.OK);
    expect(posted('/v1/apps')[0]?.body).toEqual({
      scheduler: 'aws_batch',
      cfg: { priority: 7, queue: 'from-file' },
      component: 'utils.echo',
      args: ['-cfg', 'x'],
    });
    expect(err).toContain('warning: `colour` is not a run option of aws_batch');
  });

  it('accepts TorchX’s --scheduler_args spelling and --cfg=…', async () => {
    await txs(['run', '--workspace', '', '-s', 'aws_batch', '--scheduler_args', 'queue=a', 'utils.echo']);
    await txs(['run', '--workspace', '', '-s', 'aws_batch', '-cfg=queue=b', 'utils.echo']);
    expect(posted('/v1/apps').map((r) => (r.body as { cfg: unknown }).cfg)).toEqual([
      { queue: 'a' },
      { queue: 'b' },
    ]);
  });

  it('keeps the options of every repeated -cfg, a later value of the same key winning', async () => {
    const { code } = await txs([
      'run',
      '--workspace',
      '',
      '-s',
      'aws_batch',
      '-cfg',
      'queue=q,priority=1',
      '--scheduler_args',
      'job_role_arn=arn:aws:iam::123456789012:role/job',
      '-cfg',
      'priority=5',
      '-cfg',
      '',
      'utils.echo',
    ]);
    expect(code).toBe(ExitCode.OK);
    expect(posted('/v1/apps')[0]?.body).toMatchObject({
      cfg: { queue: 'q', priority: '5', job_role_arn: 'arn:aws:iam::123456789012:role/job' },
    });
  });

  describe('--dryrun --workspace sha256:<hash>', () => {
    const sha = 'ab'.repeat(32);
    const dryrun = () =>
      txs([
        'run',
        '--dryrun',
        '--workspace',
        `sha256:${sha}`,
        '-s',
        'aws_batch',
        '-cfg',
        'queue=q',
        'utils.echo',
      ]);

    it('fails as the run would (exit 2, naming workspace.sha256) when the stack says it is not uploaded', async () => {
      api.deployedWorkspaces = new Set();
      const { code, out, err } = await dryrun();
      expect(code).toBe(ExitCode.USAGE);
      expect(out).toContain(`workspace: ${sha} (not uploaded by you)`);
      expect(err).toContain(`error: workspace.sha256: you have not uploaded the workspace archive ${sha}`);
      expect(err).toContain('hint: upload it with `txs workspace DIR`');
    });

    it('names where the job fetches an uploaded one', async () => {
      api.deployedWorkspaces = new Set([sha]);
      const { code, out } = await dryrun();
      expect(code).toBe(ExitCode.OK);
      expect(out).toContain(
        `workspace: ${sha} (uploaded; fetched by the job from s3://txs-workspaces/workspaces/owner/${sha}.tar.gz)`,
      );
    });

    it('names the archive as the server’s when the server says nothing of it (the local server)', async () => {
      const { code, out } = await dryrun();
      expect(code).toBe(ExitCode.OK);
      expect(out).toContain(`workspace: ${sha} (an archive the server holds)`);
    });
  });

  it('sends -cfg alone as TorchX string forms in one request: no GET /v1/schedulers first', async () => {
    const { code } = await txs([
      'run',
      '--workspace',
      '',
      '-s',
      'aws_batch',
      '-cfg',
      'queue=q,priority=5,share_id=ml',
      'utils.echo',
    ]);
    expect(code).toBe(ExitCode.OK);
    expect(posted('/v1/apps')[0]?.body).toMatchObject({ cfg: { queue: 'q', priority: '5', share_id: 'ml' } });
    expect(api.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /v1/apps']);
  });

  it('reports the API refusing a -cfg value of the wrong type, naming the option (exit 2)', async () => {
    const { code, err } = await txs([
      'run',
      '--workspace',
      '',
      '-s',
      'aws_batch',
      '-cfg',
      'queue=q,priority=high',
      'utils.echo',
    ]);
    expect(code).toBe(ExitCode.USAGE);
    expect(err).toContain('error: Run option: priority, must be an integer');
    expect(err).toContain('hint: see the options with `txs runopts <scheduler>`');
    expect(api.apps.size).toBe(0);
  });

  it('rejects a -cfg literal without key=value pairs before sending anything (exit 2)', async () => {
    const { code, err } = await txs(['run', '-s', 'aws_batch', '-cfg', 'queue', 'utils.echo']);
    expect(code).toBe(ExitCode.USAGE);
    expect(err).toContain('error: bad run option in -cfg');
    expect(api.requests).toHaveLength(0);
  });

  it('passes the server’s rejection of an unknown scheduler with -cfg through with exit 2', async () => {
    const { code, err } = await txs([
      'run',
      '--workspace',
      '',
      '-s',
      'slurm',
      '-cfg',
      'partition=x',
      'utils.echo',
    ]);
    expect(code).toBe(ExitCode.USAGE);
    expect(err).toContain('error: Scheduler backend: slurm does not exist');
    expect(err).toContain('hint: `txs runopts` lists the schedulers');
  });

  it('passes the server’s rejection of an unknown scheduler through with exit 2', async () => {
    const { code, err } = await txs(['run', '--workspace', '', '-s', 'slurm', 'utils.echo']);
    expect(code).toBe(ExitCode.USAGE);
    expect(err).toContain('error: Scheduler backend: slurm does not exist');
    expect(err).toContain('hint: `txs runopts` lists the schedulers');
  });

  it('takes scheduler, session and component from [cli:run]', async () => {
    const io = memoryIO({
      files: {
        '/home/user/.txsconfig':
          '[cli:run]\nscheduler = aws_batch\nsession = exp1\ncomponent = utils.sh\nworkspace =\n[aws_batch]\nqueue = q\n',
      },
    });
    const { code, out } = await txs(['run', '--', '--', 'true'], io);
    expect(code).toBe(ExitCode.OK);
    expect(out).toBe('aws_batch://exp1/sh-1\n');
    expect(posted('/v1/apps')[0]?.body).toEqual({
      scheduler: 'aws_batch',
      cfg: { queue: 'q' },
      session: 'exp1',
      component: 'utils.sh',
      args: ['--', 'true'],
    });
  });

  it('requires a component or --app', async () => {
    const { code, err } = await txs(['run', '--wait']);
    expect(code).toBe(ExitCode.USAGE);
    expect(err).toContain('error: missing component name');
    expect(err).toContain('hint: `txs builtins` lists the components');
  });

  it('runs the AppDef of an --app file, or of stdin', async () => {
    const app = { name: 'custom', roles: [{ name: 'main', image: '/tmp', entrypoint: 'true' }] };
    const io = memoryIO({ files: { 'app.json': JSON.stringify(app) } });
    expect((await txs(['run', '--app', 'app.json'], io)).code).toBe(ExitCode.OK);
    expect((await txs(['run', '--app', '-'], memoryIO({ stdin: JSON.stringify(app) }))).code).toBe(
      ExitCode.OK,
    );
    const cfg = { cwd: '/work/project', env: { TXS_ENDPOINT: api.url, ...api.ownSocketEnv } };
    expect(posted('/v1/apps').map((r) => r.body)).toEqual([
      { scheduler: 'local_cwd', cfg, app },
      { scheduler: 'local_cwd', cfg, app },
    ]);
  });

  it('rejects an --app file that is missing or not an AppDef, and --app with a component', async () => {
    expect((await txs(['run', '--app', 'nope.json'])).err).toContain(
      'error: cannot read --app nope.json: ENOENT',
    );
    const bad = await txs(['run', '--app', 'a.json'], memoryIO({ files: { 'a.json': '[1]' } }));
    expect(bad.code).toBe(ExitCode.USAGE);
    expect(bad.err).toContain('--app a.json is not an AppDef JSON object');
    const both = await txs(['run', '--app', 'a.json', 'utils.echo']);
    expect(both.err).toContain('give either a component (utils.echo) or --app a.json, not both');
    expect(posted('/v1/apps')).toHaveLength(0);
  });

  it('prints the dry run without submitting', async () => {
    const { code, out } = await txs(['run', '--dryrun', 'utils.echo', '--msg', 'hi']);
    expect(code).toBe(ExitCode.OK);
    expect(out).toContain('=== APPLICATION ===\nname: echo');
    expect(out).toContain('=== SCHEDULER REQUEST ===\nwould run echo');
    expect(posted('/v1/dryrun')).toHaveLength(1);
    expect(posted('/v1/apps')).toHaveLength(0);
  });

  it('prints the API JSON with --json', async () => {
    const { out } = await txs(['run', '--json', 'utils.echo']);
    expect(JSON.parse(out)).toEqual({
      handle: 'local_cwd://torchx/echo-1',
      scheduler: 'local_cwd',
      session: 'torchx',
      appId: 'echo-1',
      state: 'SUBMITTED',
    });
  });
});

describe('txs run --wait', () => {
  it('prints each transition with its elapsed time and exits 0 when the app succeeds', async () => {
    const { code, err } = await txs(['run', '--wait', 'utils.echo']);
    expect(code).toBe(ExitCode.OK);
    expect(err).toContain(
      'waiting for local_cwd://torchx/echo-1 (Ctrl-C stops waiting; the app keeps running)',
    );
    const transitions = err.split('\n').filter((l) => /^\s+\d/.test(l));
    expect(transitions.map((l) => l.trim().split(/\s+/)[1])).toEqual([
      'SUBMITTED',
      'PENDING',
      'RUNNING',
      'SUCCEEDED',
    ]);
    expect(transitions[0]).toBe('    0.0s  SUBMITTED');
    expect(transitions[1]).toBe('    1.5s  PENDING');
  });

  it('exits 1 and prints the status when the app fails, with the reason', async () => {
    api.nextRun = { states: ['SUBMITTED', 'RUNNING', 'FAILED'], reason: 'exit code 3' };
    const { code, err } = await txs(['run', '--wait', 'utils.sh', '--', 'sh', '-c', 'exit 3']);
    expect(code).toBe(ExitCode.APP_FAILED);
    expect(err).toMatch(/\d\.\ds {2}FAILED {2}\(exit code 3\)/);
    expect(err).toContain('local_cwd://torchx/sh-1 finished FAILED');
    expect(err).toContain('AppStatus:\n    State: FAILED');
  });

  it('retries a status read that does not see the just-submitted app yet', async () => {
    api.nextRun = { hiddenReads: 2 };
    const { code } = await txs(['run', '--wait', 'utils.echo']);
    expect(code).toBe(ExitCode.OK);
  });

  it('exits 1 when the app is cancelled', async () => {
    api.nextRun = { states: ['SUBMITTED', 'RUNNING', 'CANCELLED'] };
    expect((await txs(['run', '--wait', 'utils.echo'])).code).toBe(ExitCode.APP_FAILED);
  });

  it('polls every second at first', async () => {
    const { io } = await txs(['run', '--wait', 'utils.echo']);
    expect(io.sleeps.length).toBeGreaterThan(0);
    expect(new Set(io.sleeps)).toEqual(new Set([1000]));
  });

  it('stops waiting on Ctrl-C without cancelling the app (exit 130)', async () => {
    api.nextRun = { states: ['SUBMITTED', 'RUNNING'] };
    let io: MemoryIO;
    io = memoryIO({ onSleep: (_ms, count) => count === 3 && io.interrupt() });
    const { code, err } = await txs(['run', '--wait', 'utils.echo'], io);
    expect(code).toBe(ExitCode.INTERRUPTED);
    expect(err).toContain('error: stopped waiting for local_cwd://torchx/echo-1; the app keeps running');
    expect(err).toContain('hint: cancel it with: txs cancel local_cwd://torchx/echo-1');
    expect(api.requests.some((r) => r.path.endsWith('/cancel'))).toBe(false);
  });

  it('streams every replica’s logs with role/replica prefixes to stderr with --log', async () => {
    api.nextRun = {
      roles: [{ name: 'trainer', numReplicas: 2 }],
      logs: { 'trainer/0': ['rank 0 up', 'rank 0 done'], 'trainer/1': ['rank 1 up'] },
    };
    const { code, out, err } = await txs(['run', '--log', 'dist.ddp', '-j', '1x2']);
    expect(code).toBe(ExitCode.OK);
    expect(out).toBe('local_cwd://torchx/ddp-1\n');
    expect(err).toContain('trainer/0 rank 0 up\ntrainer/0 rank 0 done\n');
    expect(err).toContain('trainer/1 rank 1 up\n');
  });

  it('prints one JSON document, the final app with its handle, with --json --wait', async () => {
    const { out } = await txs(['run', '--wait', '--json', 'utils.echo']);
    const document = JSON.parse(out);
    expect(document.handle).toBe('local_cwd://torchx/echo-1');
    expect(document.status.state).toBe('SUCCEEDED');
    const submitted = JSON.parse((await txs(['run', '--json', 'utils.echo'])).out);
    expect(submitted.handle).toBe('local_cwd://torchx/echo-2');
  });
});

describe('txs wait', () => {
  it('waits for an existing app and exits by its final state', async () => {
    api.addApp('local_cwd://torchx/ok-1', { states: ['RUNNING', 'SUCCEEDED'] });
    api.addApp('local_cwd://torchx/bad-1', { states: ['RUNNING', 'FAILED'] });
    expect((await txs(['wait', 'local_cwd://torchx/ok-1'])).code).toBe(ExitCode.OK);
    expect((await txs(['wait', 'local_cwd://torchx/bad-1'])).code).toBe(ExitCode.APP_FAILED);
  });

  it('says "unknown app" at once for a handle that does not exist', async () => {
    const { code, io } = await txs(['wait', 'local_cwd://torchx/ghost-1']);
    expect(code).toBe(ExitCode.NOT_FOUND);
    expect(io.sleeps).toEqual([]);
  });
});

describe('txs status and describe', () => {
  it("prints TorchX's AppStatus layout", async () => {
    api.addApp('local_cwd://torchx/echo-1', { states: ['RUNNING'] });
    const { code, out } = await txs(['status', 'local_cwd://torchx/echo-1']);
    expect(code).toBe(ExitCode.OK);
    expect(out).toBe(
      'AppStatus:\n    State: RUNNING\n    Num Restarts: 0\n    Roles: \n *echo[0]:RUNNING\n    Msg: \n' +
        '    Structured Error Msg: <NONE>\n    UI URL: None\n    \n',
    );
  });

  it('asks the scheduler with --refresh and prints raw JSON with --json', async () => {
    api.addApp('local_cwd://torchx/echo-1', { states: ['RUNNING'] });
    const { out } = await txs(['status', '--refresh', '--json', 'local_cwd://torchx/echo-1']);
    expect(JSON.parse(out).status.state).toBe('RUNNING');
    expect(api.requests.at(-1)?.query.get('refresh')).toBe('true');
  });

  it('says "unknown app" and exits 3 for a handle the API does not know', async () => {
    const { code, err } = await txs(['status', 'local_cwd://torchx/ghost']);
    expect(code).toBe(ExitCode.NOT_FOUND);
    expect(err).toBe(
      'error: unknown app local_cwd://torchx/ghost\nhint: `txs list` shows your apps (apps are private to the identity that launched them)\n',
    );
  });

  it('rejects a malformed handle with exit 2 before calling the API', async () => {
    const { code, err } = await txs(['status', 'echo-1']);
    expect(code).toBe(ExitCode.USAGE);
    expect(err).toContain('error: echo-1 is not of the form: <scheduler_backend>://<session_name>/<app_id>');
    expect(api.requests).toHaveLength(0);
  });

  it('prints the AppDef as YAML', async () => {
    api.addApp('local_cwd://torchx/echo-1', {});
    const { out } = await txs(['describe', 'local_cwd://torchx/echo-1']);
    expect(out).toBe(
      'name: echo\nroles:\n  - name: echo\n    image: /tmp\n    entrypoint: echo\n    args:\n      - hi\n    numReplicas: 1\nmetadata: {}\n',
    );
  });
});

describe('a replica whose torchelastic error file the service cut to its bound', () => {
  const traceback = `Traceback (most recent call last):\n${'  File "train.py", line 1, in <module>\n'.repeat(60)}ValueError: bad`;
  const document = JSON.stringify({
    message: { message: traceback, errorCode: 1, extraInfo: { timestamp: 1_700_000_000 } },
  });
  const cut = truncateErrorDocument(document, MAX_REPLICA_TEXT_BYTES);
  beforeEach(() => {
    api.addApp('local_cwd://torchx/cut-1', { states: ['RUNNING', 'FAILED'], errorDocument: cut });
  });

  it('is shown by txs status, txs wait and txs run --wait instead of crashing with exit 70', async () => {
    expect(JSON.parse(cut)).toMatchObject({ truncated: true });
    await txs(['status', 'local_cwd://torchx/cut-1']); // RUNNING: the next read is FAILED
    const status = await txs(['status', 'local_cwd://torchx/cut-1']);
    expect(status.code).toBe(ExitCode.OK);
    expect(status.out).toContain('echo[0]:FAILED (exitcode: <N/A>)');
    expect(status.out).toContain('error_msg: Traceback (most recent call last):');
    api.addApp('local_cwd://torchx/cut-2', { states: ['RUNNING', 'FAILED'], errorDocument: cut });
    const waited = await txs(['wait', 'local_cwd://torchx/cut-2']);
    expect(waited.code).toBe(ExitCode.APP_FAILED);
    expect(waited.err).toContain('error_msg: Traceback (most recent call last):');
    api.nextRun = { states: ['RUNNING', 'FAILED'], errorDocument: cut };
    const run = await txs(['run', '--wait', 'utils.echo']);
    expect(run.code).toBe(ExitCode.APP_FAILED);
    expect(run.err).toContain('[truncated: ');
  });
});

describe('error messages', () => {
  it("escape the text they quote before txs adds its own controls, so a copy of txs's line clearing shows as text", async () => {
    const io = memoryIO({ tty: true });
    const code = await main(
      ['run', '-cfg', 'prepend_cwd=x\r\u001b[2Kfake: job SUCCEEDED', 'utils.echo'],
      terminalIO({ ...io, env: { TXS_ENDPOINT: api.url } }),
    );
    expect(code).toBe(ExitCode.USAGE);
    expect(io.errText()).toContain('\\u{D}\\u{1B}[2Kfake: job SUCCEEDED');
    expect(io.errText()).not.toContain('\u001b[2K');
  });
});

describe("txs log and a job's control codes", () => {
  const lines = [
    ' 10%|#   |\r 50%|##  |\r100%|####|\r',
    '\r\u001b[2Kfake: job SUCCEEDED',
    '\u001b[31mred\u001b[0m and \u001b]0;title\u0007',
  ];
  beforeEach(() => {
    api.addApp('local_cwd://torchx/bar-1', {
      roles: [{ name: 'trainer', numReplicas: 1 }],
      states: ['SUCCEEDED'],
      logs: { 'trainer/0': lines },
    });
  });

  it('on a terminal, resolves carriage returns, drops colours and shows every other control escaped', async () => {
    const io = memoryIO({ tty: true });
    const code = await main(
      ['log', 'local_cwd://torchx/bar-1/trainer/0'],
      terminalIO({ ...io, env: { TXS_ENDPOINT: api.url } }),
    );
    expect(code).toBe(ExitCode.OK);
    expect(io.out()).toBe('100%|####|\n\\u{1B}[2Kfake: job SUCCEEDED\nred and \\u{1B}]0;title\\u{7}\n');
  });

  it('into a pipe or file, keeps the bytes the job wrote', async () => {
    const io = memoryIO({ tty: false });
    await main(
      ['log', 'local_cwd://torchx/bar-1/trainer/0'],
      terminalIO({ ...io, env: { TXS_ENDPOINT: api.url } }),
    );
    expect(io.out()).toBe(`${lines.join('\n')}\n`);
  });
});

describe('txs log', () => {
  beforeEach(() => {
    api.addApp('local_cwd://torchx/ddp-1', {
      roles: [
        { name: 'trainer', numReplicas: 2 },
        { name: 'ps', numReplicas: 1 },
      ],
      states: ['SUCCEEDED'],
      logs: { 'trainer/0': ['t0 a', 't0 b'], 'trainer/1': ['t1 a'], 'ps/0': ['ps a'] },
    });
  });

  it('prints every replica of every role, each line prefixed with role/replica', async () => {
    const { code, out } = await txs(['log', 'local_cwd://torchx/ddp-1']);
    expect(code).toBe(ExitCode.OK);
    expect(out.split('\n').filter(Boolean).sort()).toEqual([
      'ps/0 ps a',
      'trainer/0 t0 a',
      'trainer/0 t0 b',
      'trainer/1 t1 a',
    ]);
  });

  it('prints one replica without a prefix', async () => {
    const { out } = await txs(['log', 'local_cwd://torchx/ddp-1/trainer/0']);
    expect(out).toBe('t0 a\nt0 b\n');
  });

  it('reads only the replicas of the role given', async () => {
    const { out } = await txs(['log', 'local_cwd://torchx/ddp-1/trainer']);
    expect(out.split('\n').filter(Boolean).sort()).toEqual([
      'trainer/0 t0 a',
      'trainer/0 t0 b',
      'trainer/1 t1 a',
    ]);
  });

  it('names the roles when the role does not exist', async () => {
    const { code, err } = await txs(['log', 'local_cwd://torchx/ddp-1/worker']);
    expect(code).toBe(ExitCode.USAGE);
    expect(err).toBe('error: no role worker in app ddp\nhint: its roles are: trainer, ps\n');
  });

  it('passes --regex, --since, --until and --streams to the API', async () => {
    const { out } = await txs([
      'log',
      '--regex',
      'b$',
      '--since',
      '10m',
      '--until',
      '2026-01-15T13:00:00Z',
      '--streams',
      'stderr',
      'local_cwd://torchx/ddp-1/trainer/0',
    ]);
    expect(out).toBe('t0 b\n');
    const query = api.requests.find((r) => r.path.endsWith('/logs'))?.query;
    expect(query?.get('since')).toBe('2026-01-15T11:50:00.000Z');
    expect(query?.get('until')).toBe('2026-01-15T13:00:00.000Z');
    expect(query?.get('streams')).toBe('stderr');
    expect(query?.get('role')).toBe('trainer');
    expect(query?.get('replica')).toBe('0');
  });

  it('rejects an unknown --streams value', async () => {
    const { code, err } = await txs(['log', '--streams', 'both', 'local_cwd://torchx/ddp-1']);
    expect(code).toBe(ExitCode.USAGE);
    expect(err).toContain("error: option '--streams <streams>' argument 'both' is invalid");
  });

  it('writes JSON lines with --json', async () => {
    const { out } = await txs(['log', '--json', 'local_cwd://torchx/ddp-1/ps/0']);
    expect(out).toBe('{"role":"ps","replica":0,"line":"ps a"}\n');
  });

  it('follows a running app with -t until it finishes', async () => {
    api.addApp('local_cwd://torchx/echo-9', {
      states: ['PENDING', 'RUNNING', 'RUNNING', 'SUCCEEDED'],
      logs: { 'echo/0': ['hello', 'bye'] },
    });
    const { code, out } = await txs(['log', '-t', 'local_cwd://torchx/echo-9']);
    expect(code).toBe(ExitCode.OK);
    expect(out).toBe('hello\nbye\n');
  });

  it('stops following on Ctrl-C with exit 130, leaving the app running', async () => {
    api.addApp('local_cwd://torchx/long-1', { states: ['RUNNING'], logs: { 'echo/0': ['tick'] } });
    let io: MemoryIO;
    io = memoryIO({ onSleep: (_ms, count) => count === 4 && io.interrupt() });
    const { code, out, err } = await txs(['log', '-t', 'local_cwd://torchx/long-1'], io);
    expect(code).toBe(ExitCode.INTERRUPTED);
    expect(out).toBe('tick\n');
    expect(err).toBe('error: stopped following local_cwd://torchx/long-1; the app keeps running\n');
  });

  it('says when an app has no logs yet', async () => {
    api.addApp('local_cwd://torchx/wait-1', { states: ['PENDING'] });
    const { out, err } = await txs(['log', 'local_cwd://torchx/wait-1']);
    expect(out).toBe('');
    expect(err).toBe('local_cwd://torchx/wait-1 is PENDING: no logs yet (add -t to follow them)\n');
  });
});

describe('txs list', () => {
  it('prints an aligned table, newest first', async () => {
    api.addApp('local_cwd://torchx/old-1', { states: ['SUCCEEDED'] }, Date.parse('2026-01-15T10:00:00Z'));
    api.addApp('local_cwd://torchx/new-1', { states: ['RUNNING'] }, Date.parse('2026-01-15T11:00:00Z'));
    const { out } = await txs(['list']);
    const lines = out.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^APP HANDLE {16}APP STATUS {2}NAME {2}CREATED$/);
    expect(lines[2]).toMatch(/^local_cwd:\/\/torchx\/new-1 {2}RUNNING {5}new {3}\d{4}-/);
    expect(lines[3]).toMatch(/^local_cwd:\/\/torchx\/old-1 {2}SUCCEEDED {3}old {3}\d{4}-/);
  });

  it('sends the filters and follows pages up to --limit', async () => {
    for (let i = 0; i < 5; i++) api.addApp(`local_cwd://torchx/a-${i}`, { states: ['RUNNING'] }, 1000 + i);
    const { out, err } = await txs([
      'list',
      '--state',
      'running,pending',
      '--state',
      'FAILED',
      '-s',
      'local_cwd',
      '--limit',
      '3',
    ]);
    expect(out.trimEnd().split('\n')).toHaveLength(5);
    expect(err).toBe('(more apps: raise --limit above 3)\n');
    const query = api.requests[0]?.query;
    expect(query?.getAll('state')).toEqual(['RUNNING', 'PENDING', 'FAILED']);
    expect(query?.get('scheduler')).toBe('local_cwd');
  });

  it('rejects an unknown state with the list of states', async () => {
    const { code, err } = await txs(['list', '--state', 'DONE']);
    expect(code).toBe(ExitCode.USAGE);
    expect(err).toContain('DONE is not a state; use one of UNSUBMITTED, SUBMITTED');
  });

  it('asks for every owner with --owner all (deployment admins)', async () => {
    await txs(['list', '--owner', 'all']);
    expect(api.requests[0]?.query.get('owner')).toBe('all');
    await txs(['list']);
    expect(api.requests[1]?.query.has('owner')).toBe(false);
  });

  it('prints the apps as JSON with --json', async () => {
    api.addApp('local_cwd://torchx/a-1', {});
    const { out } = await txs(['list', '--json']);
    expect(JSON.parse(out).apps.map((a: { handle: string }) => a.handle)).toEqual(['local_cwd://torchx/a-1']);
  });
});

describe('txs cancel and delete', () => {
  it('cancels and reports the state', async () => {
    api.addApp('local_cwd://torchx/sleep-1', { states: ['RUNNING'] });
    const { code, out } = await txs(['cancel', 'local_cwd://torchx/sleep-1']);
    expect(code).toBe(ExitCode.OK);
    expect(out).toBe('cancel requested for local_cwd://torchx/sleep-1 (state: CANCELLED)\n');
  });

  it('says an app that had already finished had nothing to cancel', async () => {
    api.addApp('local_cwd://torchx/done-1', { states: ['SUCCEEDED'] });
    const { code, out } = await txs(['cancel', 'local_cwd://torchx/done-1']);
    expect(code).toBe(ExitCode.OK);
    expect(out).toBe(
      'local_cwd://torchx/done-1 had already finished (state: SUCCEEDED); nothing to cancel\n',
    );
  });

  it('deletes with DELETE', async () => {
    api.addApp('local_cwd://torchx/sleep-1', { states: ['SUCCEEDED'] });
    const { out } = await txs(['delete', 'local_cwd://torchx/sleep-1']);
    expect(out).toBe('delete requested for local_cwd://torchx/sleep-1 (state: SUCCEEDED)\n');
    expect(api.requests.at(-1)?.method).toBe('DELETE');
  });
});

describe('txs runopts and builtins', () => {
  it('prints the run options of every scheduler or of one', async () => {
    const all = await txs(['runopts']);
    expect(all.out).toContain('local_cwd:\n    usage:');
    expect(all.out).toContain('aws_batch:\n    usage:\n        queue=QUEUE,[priority=PRIORITY]');
    const one = await txs(['runopts', 'aws_batch']);
    expect(one.out).not.toContain('local_cwd');
  });

  it('lists the schedulers when the one asked for does not exist', async () => {
    const { code, err } = await txs(['runopts', 'slurm']);
    expect(code).toBe(ExitCode.USAGE);
    expect(err).toContain('hint: schedulers: local_cwd, aws_batch');
  });

  it('lists builtins and shows one', async () => {
    expect((await txs(['builtins'])).out).toBe(
      'Found 2 builtin components:\n  1. utils.echo  Echoes a message to stdout.\n  2. utils.sh    Runs a shell command.\n',
    );
    expect((await txs(['builtins', 'utils.echo'])).out).toContain('usage: txs run utils.echo [--msg MSG]');
    const missing = await txs(['builtins', 'utils.nope']);
    expect(missing.code).toBe(ExitCode.USAGE);
    expect(missing.err).toContain('hint: builtins: utils.echo, utils.sh');
  });
});

describe('txs usage', () => {
  it('prints help with exit 0, and help with exit 2 when no command is given', async () => {
    const help = await txs(['--help']);
    expect(help.code).toBe(ExitCode.OK);
    expect(help.out).toContain('Usage: txs [options] [command]');
    const none = await txs([]);
    expect(none.code).toBe(ExitCode.USAGE);
  });

  it('rejects unknown commands and options with exit 2', async () => {
    const unknown = await txs(['launch']);
    expect(unknown.code).toBe(ExitCode.USAGE);
    expect(unknown.err).toContain("error: unknown command 'launch'");
    expect((await txs(['status', '--bogus', 'local_cwd://torchx/a'])).code).toBe(ExitCode.USAGE);
  });

  it('explains an unreachable endpoint with exit 5', async () => {
    const port = await closedPort();
    const io = memoryIO({ env: { TXS_ENDPOINT: `http://127.0.0.1:${port}` } });
    const { code, err } = await txs(['list'], io);
    expect(code).toBe(ExitCode.UNAVAILABLE);
    expect(err).toContain(`error: cannot reach http://127.0.0.1:${port}: connection refused`);
    expect(err).toContain('(the endpoint comes from TXS_ENDPOINT)');
  });

  it('takes --endpoint before the command as well as after it, the command’s own winning', async () => {
    const port = await closedPort();
    const dead = `http://127.0.0.1:${port}`;
    const io = memoryIO({ env: { TXS_ENDPOINT: dead } });
    const before = await txs(['--endpoint', api.url, 'list'], io);
    expect(before.code).toBe(ExitCode.OK);
    const after = await txs(['--endpoint', dead, 'list', '--endpoint', api.url], memoryIO({ env: {} }));
    expect(after.code).toBe(ExitCode.OK);
    const unreachable = await txs(['--endpoint', dead, 'status', 'local_cwd://torchx/a'], memoryIO());
    expect(unreachable.code).toBe(ExitCode.UNAVAILABLE);
    expect(unreachable.err).toContain(`cannot reach ${dead}`);
    expect(unreachable.err).toContain('(the endpoint comes from --endpoint)');
    // TorchX's -cfg still reaches run after an option given before the command.
    const run = await txs([
      '--endpoint',
      api.url,
      'run',
      '--workspace',
      '',
      '-s',
      'aws_batch',
      '-cfg',
      'queue=q',
      'utils.echo',
    ]);
    expect(run.code).toBe(ExitCode.OK);
    expect(posted('/v1/apps').at(-1)?.body).toMatchObject({ scheduler: 'aws_batch', cfg: { queue: 'q' } });
  });

  it('reports a broken .txsconfig with its file and line', async () => {
    const io = memoryIO({ files: { '/work/project/.txsconfig': 'endpoint = x\n' } });
    const { code, err } = await txs(['list'], io);
    expect(code).toBe(ExitCode.USAGE);
    expect(err).toContain(
      'error: /work/project/.txsconfig:1: `endpoint = x` comes before any [section] header',
    );
  });

  it('sends TXS_USER as the X-Txs-User header', async () => {
    await txs(['list'], memoryIO({ env: { TXS_USER: 'alice' } }));
    expect(api.requests[0]?.headers['x-txs-user']).toBe('alice');
  });
});

describe('normalizeRunArgv', () => {
  it('rewrites -cfg only among run’s own options', () => {
    expect(normalizeRunArgv(['run', '-s', 'x', '-cfg', 'a=1', 'c', '-cfg', 'b'])).toEqual([
      'run',
      '-s',
      'x',
      '--cfg',
      'a=1',
      'c',
      '-cfg',
      'b',
    ]);
    expect(normalizeRunArgv(['run', '--', '-cfg'])).toEqual(['run', '--', '-cfg']);
    expect(normalizeRunArgv(['status', '-cfg'])).toEqual(['status', '-cfg']);
    expect(normalizeRunArgv(['--endpoint', 'run', 'run', '-cfg', 'a=1', 'c'])).toEqual([
      '--endpoint',
      'run',
      'run',
      '--cfg',
      'a=1',
      'c',
    ]);
    expect(normalizeRunArgv(['--endpoint=https://api', 'status', '-cfg'])).toEqual([
      '--endpoint=https://api',
      'status',
      '-cfg',
    ]);
  });
});
