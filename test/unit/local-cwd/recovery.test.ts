import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { appendFile, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  EXIT_CODE_FILE,
  EXIT_CODE_UNKNOWN_REASON,
  type LocalAppRecord,
  NEVER_STARTED_REASON,
  processRef,
  ReplicaLogTailer,
  readExitCode,
  writeAppRecord,
} from '../../../lib/schedulers/local-cwd/index.js';
import { type Harness, isAlive, makeHarness, shApp } from './helpers.js';

const FIXTURE = fileURLToPath(new URL('../../fixtures/local-cwd/crashing-scheduler.ts', import.meta.url));

/** The pid of a process that has exited (and been reaped). */
function deadPid(): number {
  return spawnSync('true').pid as number;
}

async function recordOf(h: Harness, appId: string): Promise<LocalAppRecord> {
  return JSON.parse(await readFile(path.join(h.dataDir, appId, 'app.json'), 'utf8')) as LocalAppRecord;
}

/** Waits (bounded) until `check` holds. */
async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`gave up waiting for ${what}`);
}

/**
 * Starts a scheduler in its own process on the harness's data dir, lets it submit `apps`, and kills it with
 * SIGKILL once they run: a real crash, with no shutdown code run.
 */
async function crashAfterSubmitting(h: Harness, apps: Array<[string, string]>): Promise<string[]> {
  const child: ChildProcess = spawn(
    process.execPath,
    ['--import', 'tsx', FIXTURE, h.dataDir, path.dirname(h.dataDir), JSON.stringify(apps)],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const line = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      if (out.includes('\n')) resolve(out.trim());
    });
    child.once('exit', (code) => reject(new Error(`the crashing scheduler exited early (${code})`)));
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
  return JSON.parse(line) as string[];
}

async function exitCodeWritten(h: Harness, appId: string): Promise<boolean> {
  const stdout = path.join(h.dataDir, appId, 'worker', '0', 'stdout.log');
  return (await readExitCode({ stdout })) !== undefined;
}

describe('LocalCwdScheduler after its local server crashed (kill -9)', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await makeHarness({ killGracePeriodMs: 2_000, pollIntervalMs: 20 });
  });
  afterEach(async () => {
    await h.cleanup();
  });

  it('settles what ended during the outage from recorded exit codes, and adopts what still runs', async () => {
    // The short apps end only once the server is dead (they wait for this file); the printer prints until
    // told to stop, after the restart.
    const outage = path.join(path.dirname(h.dataDir), 'outage');
    const stop = path.join(path.dirname(h.dataDir), 'stop');
    const printer = `i=0; while [ ! -e ${stop} ]; do echo "line $i"; i=$((i+1)); sleep 0.02; done; echo end`;
    const afterCrash = `while [ ! -e ${outage} ]; do sleep 0.02; done;`;
    const [ok, bad, chatty, silent] = (await crashAfterSubmitting(h, [
      ['ok', `${afterCrash} echo finished`],
      ['bad', `${afterCrash} exit 3`],
      ['chatty', printer],
      ['silent', 'echo started; exec sleep 60'],
    ])) as [string, string, string, string];
    const silentPid = (await recordOf(h, silent)).replicas[0]?.process?.pid as number;
    // The server is dead; let two apps end and the printer write on (it has no pipe to a dead server).
    await writeFile(outage, '');
    await until(
      async () => (await exitCodeWritten(h, ok)) && (await exitCodeWritten(h, bad)),
      'the short apps to exit',
    );
    const restarted = h.restart();
    expect((await restarted.recover()).sort()).toEqual([ok, bad, chatty, silent].sort());

    // Right after recovery, before any poll: the outcomes of the outage.
    const okDesc = await restarted.describe(ok);
    expect(okDesc?.state).toBe('SUCCEEDED');
    expect(okDesc?.rolesStatuses[0]?.replicas[0]).toMatchObject({ state: 'SUCCEEDED', exitCode: 0 });
    expect((await restarted.readLogs(ok, { role: 'worker' })).lines).toEqual(['finished']);
    const badDesc = await restarted.describe(bad);
    expect(badDesc).toMatchObject({ state: 'FAILED', msg: 'worker[0] exited with code 3' });
    expect((await restarted.describe(chatty))?.state).toBe('RUNNING');
    expect((await restarted.describe(silent))?.state).toBe('RUNNING');
    expect(isAlive(silentPid)).toBe(true);
    const terminal = (id: string) => h.changes.filter((c) => c.appId === id && c.state !== 'RUNNING');
    expect(terminal(ok).map((c) => c.state)).toEqual(['SUCCEEDED']);
    expect(terminal(bad).map((c) => c.state)).toEqual(['FAILED']);

    // The adopted printer runs to its end: every line, once, in order; it was not killed by SIGPIPE.
    await writeFile(stop, '');
    const chattyDone = await restarted.waitForExit(chatty);
    expect(chattyDone.state).toBe('SUCCEEDED');
    expect(chattyDone.rolesStatuses[0]?.replicas[0]?.exitCode).toBe(0);
    const combined = (await restarted.readLogs(chatty, { role: 'worker', limit: 10_000 })).lines;
    expect(combined.length).toBeGreaterThan(1);
    expect(combined).toEqual([...Array.from({ length: combined.length - 1 }, (_, i) => `line ${i}`), 'end']);
    expect(
      (await restarted.readLogs(chatty, { role: 'worker', streams: 'stdout', limit: 10_000 })).lines,
    ).toEqual(combined);

    // The adopted silent one is cancellable: its process group is signalled.
    await restarted.cancel(silent, 'cancelled after adoption');
    const silentDone = await restarted.waitForExit(silent);
    expect(silentDone).toMatchObject({ state: 'CANCELLED', msg: 'cancelled after adoption' });
    expect(silentDone.rolesStatuses[0]?.replicas[0]).toMatchObject({ state: 'CANCELLED', exitCode: 143 });
    expect(isAlive(silentPid)).toBe(false);
    expect(terminal(silent).map((c) => c.state)).toEqual(['CANCELLED']);
  });

  it('fails fast on adoption: a replica that failed during the outage stops its still-running peer', async () => {
    const script = 'if [ "$TORCHX_REPLICA_IDX" = 1 ]; then exit 5; fi; exec sleep 60';
    const first = h.scheduler;
    const appId = await first.submit(shApp('pair', script, { numReplicas: 2 }));
    await first.waitForExit(appId);
    // Rebuild the crash: replica 1 exited 5 (recorded by its wrapper), replica 0 still runs under a dead server.
    const sleeper = spawn('sh', ['-c', 'exec sleep 60'], { detached: true, stdio: 'ignore' });
    await new Promise((resolve) => sleeper.once('spawn', resolve));
    const record = await recordOf(h, appId);
    record.state = 'RUNNING';
    record.supervisor = { pid: deadPid(), instance: 'gone' };
    delete record.reason;
    delete record.finishedAt;
    record.replicas = [
      { role: 'worker', replicaId: 0, state: 'RUNNING', process: processRef(sleeper.pid as number) },
      { role: 'worker', replicaId: 1, state: 'RUNNING', process: processRef(deadPid()) },
    ];
    await writeAppRecord(h.dataDir, record);
    await writeFile(path.join(h.dataDir, appId, 'worker', '1', EXIT_CODE_FILE), '5\n');
    const desc = await h.restart().waitForExit(appId);
    expect(desc.state).toBe('FAILED');
    expect(desc.msg).toBe('worker[1] exited with code 5; 1 other replica(s) were terminated');
    expect(desc.rolesStatuses[0]?.replicas.map((r) => r.state)).toEqual(['CANCELLED', 'FAILED']);
    expect(isAlive(sleeper.pid as number)).toBe(false);
  });

  it('cancels an app a dead server left running, as the first thing a new scheduler is asked', async () => {
    const appId = await h.scheduler.submit(shApp('orphan', 'true'));
    await h.scheduler.waitForExit(appId);
    const sleeper = spawn('sh', ['-c', 'exec sleep 60'], { detached: true, stdio: 'ignore' });
    await new Promise((resolve) => sleeper.once('spawn', resolve));
    const record = await recordOf(h, appId);
    record.state = 'RUNNING';
    record.supervisor = { pid: deadPid(), instance: 'gone' };
    delete record.reason;
    delete record.finishedAt;
    record.replicas = [
      { role: 'worker', replicaId: 0, state: 'RUNNING', process: processRef(sleeper.pid as number) },
    ];
    await writeAppRecord(h.dataDir, record);
    // A running replica has not written its exit code yet.
    await rm(path.join(h.dataDir, appId, 'worker', '0', EXIT_CODE_FILE));
    const restarted = h.restart();
    await restarted.cancel(appId, 'stop the orphan');
    const desc = await restarted.waitForExit(appId);
    expect(desc).toMatchObject({ state: 'CANCELLED', msg: 'stop the orphan' });
    expect(desc.rolesStatuses[0]?.replicas[0]).toMatchObject({ state: 'CANCELLED', exitCode: 143 });
    expect(isAlive(sleeper.pid as number)).toBe(false);
  });

  // Start times come from /proc; without it (macOS) a reused pid cannot be told apart, which this test needs.
  it.runIf(existsSync('/proc/self/stat'))(
    'never signals a process that merely reuses a recorded pid, and reports the exit code as unknown',
    async () => {
      const appId = await h.scheduler.submit(shApp('reused', 'true'));
      await h.scheduler.waitForExit(appId);
      const stray = spawn('sleep', ['60'], { detached: true, stdio: 'ignore' });
      try {
        await new Promise((resolve) => stray.once('spawn', resolve));
        const record = await recordOf(h, appId);
        const ref = processRef(stray.pid as number);
        record.state = 'RUNNING';
        record.supervisor = { pid: deadPid(), instance: 'gone' };
        record.replicas = [
          {
            role: 'worker',
            replicaId: 0,
            state: 'RUNNING',
            process: { ...ref, startTime: `${Number(ref.startTime) - 1}` },
          },
        ];
        await writeAppRecord(h.dataDir, record);
        await writeFile(path.join(h.dataDir, appId, 'worker', '0', EXIT_CODE_FILE), '');
        const desc = await h.restart().describe(appId);
        expect(desc?.state).toBe('FAILED');
        expect(desc?.rolesStatuses[0]?.replicas[0]?.reason).toBe(EXIT_CODE_UNKNOWN_REASON);
        expect(desc?.msg).toBe(`worker[0] ${EXIT_CODE_UNKNOWN_REASON}`);
        expect(isAlive(stray.pid as number)).toBe(true);
      } finally {
        stray.kill('SIGKILL');
      }
    },
  );

  it('fails an app whose server died before a replica was recorded as started, once', async () => {
    const appId = await h.scheduler.submit(shApp('early', 'true'));
    await h.scheduler.waitForExit(appId);
    const record = await recordOf(h, appId);
    record.state = 'SUBMITTED';
    record.supervisor = { pid: deadPid(), instance: 'gone' };
    record.replicas = [{ role: 'worker', replicaId: 0, state: 'PENDING' }];
    await writeAppRecord(h.dataDir, record);
    h.changes.length = 0;
    const restarted = h.restart();
    const desc = await restarted.describe(appId);
    expect(desc?.state).toBe('FAILED');
    expect(desc?.rolesStatuses[0]?.replicas[0]?.reason).toBe(NEVER_STARTED_REASON);
    expect(await h.restart().describe(appId)).toEqual(desc);
    expect(h.changes.map((c) => c.state)).toEqual(['FAILED']);
  });
});

describe('ReplicaLogTailer', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await makeHarness();
  });
  afterEach(() => h.cleanup());

  it('resumes after a crash between writing combined.log and saving its cursor: no line lost or doubled', async () => {
    const dir = path.dirname(h.dataDir);
    const paths = {
      stdout: path.join(dir, 'stdout.log'),
      stderr: path.join(dir, 'stderr.log'),
      combined: path.join(dir, 'combined.log'),
    };
    await writeFile(paths.stdout, 'a\nb\npart');
    await writeFile(paths.stderr, 'e1\n');
    let now = 1_000;
    const first = await ReplicaLogTailer.open(paths, () => now++);
    await first.poll();
    // The dead server had appended more to combined.log than its cursor vouches for.
    await appendFile(paths.combined, 'half-written garbage\n');
    await appendFile(`${paths.stdout}`, 'ial\nc\n');
    const second = await ReplicaLogTailer.open(paths, () => now++);
    await second.finish();
    const combined = (await readFile(paths.combined, 'utf8')).split('\n');
    expect(combined.sort()).toEqual(['', 'a', 'b', 'c', 'e1', 'partial']);
    const index = await readFile(`${paths.combined}.idx`, 'utf8');
    const offsets = index
      .trim()
      .split('\n')
      .map((l) => Number(l.split(' ')[0]));
    expect(offsets).toEqual([...offsets].sort((x, y) => x - y));
    expect(new Set(offsets).size).toBe(offsets.length);
  });
});
