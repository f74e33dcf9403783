import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type LocalAppRecord,
  processRef,
  SERVER_DIED_REASON,
  writeAppRecord,
} from '../../../lib/schedulers/local-cwd/index.js';
import { type Harness, isAlive, makeHarness, shApp } from './helpers.js';

/** The pid of a process that has exited (and been reaped). */
function deadPid(): number {
  const result = spawnSync('true');
  return result.pid as number;
}

/**
 * Rewrites a finished app's record as if its local server had died while it ran: RUNNING, supervised by a
 * dead process, with the given replica processes.
 */
async function orphan(h: Harness, appId: string, replicaPids: number[]): Promise<void> {
  const file = path.join(h.dataDir, appId, 'app.json');
  const record = JSON.parse(await readFile(file, 'utf8')) as LocalAppRecord;
  record.state = 'RUNNING';
  delete record.reason;
  delete record.finishedAt;
  record.supervisor = { pid: deadPid(), instance: 'gone' };
  record.replicas = record.replicas.map((replica, i) => {
    const pid = replicaPids[i];
    const { exitCode: _exitCode, finishedAt: _finishedAt, reason: _reason, ...rest } = replica;
    return { ...rest, state: 'RUNNING', ...(pid === undefined ? {} : { process: processRef(pid) }) };
  });
  await writeAppRecord(h.dataDir, record);
}

describe('LocalCwdScheduler after its local server died', () => {
  let h: Harness;
  let stray: ChildProcess | undefined;
  beforeEach(async () => {
    h = await makeHarness();
  });
  afterEach(async () => {
    if (stray?.exitCode === null && stray.signalCode === null) stray.kill('SIGKILL');
    await h.cleanup();
  });

  it('reports an app whose replicas are gone as FAILED, once, with a reason saying the server stopped', async () => {
    const appId = await h.scheduler.submit(shApp('crashed', 'echo before the crash', { numReplicas: 2 }));
    await h.scheduler.waitForExit(appId);
    await orphan(h, appId, [deadPid(), deadPid()]);
    h.changes.length = 0;
    const restarted = h.restart();
    const desc = await restarted.describe(appId);
    expect(desc?.state).toBe('FAILED');
    expect(desc?.msg).toMatch(new RegExp(`^${SERVER_DIED_REASON} \\(server pid \\d+\\)$`));
    expect(desc?.rolesStatuses[0]?.replicas.map((r) => [r.state, r.reason])).toEqual([
      ['FAILED', 'the local server stopped before this replica finished; its exit code is unknown'],
      ['FAILED', 'the local server stopped before this replica finished; its exit code is unknown'],
    ]);
    expect((await restarted.list()).map((a) => a.state)).toEqual(['FAILED']);
    expect(await h.restart().describe(appId)).toEqual(desc);
    expect(h.changes.map((c) => [c.appId, c.state])).toEqual([[appId, 'FAILED']]);
    expect((await restarted.readLogs(appId, { role: 'worker' })).lines).toEqual(['before the crash']);
  });

  it('kills a replica process that outlived its server, after checking it is the same process', async () => {
    const appId = await h.scheduler.submit(shApp('orphaned', 'true'));
    await h.scheduler.waitForExit(appId);
    stray = spawn('sleep', ['60'], { detached: true, stdio: 'ignore' });
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      stray?.once('exit', (_code, signal) => resolve(signal)),
    );
    await new Promise((resolve) => stray?.once('spawn', resolve));
    await orphan(h, appId, [stray.pid as number]);
    const recovered = await h.restart().recover();
    expect(recovered).toEqual([appId]);
    expect(await exited).toBe('SIGKILL');
    const desc = await h.scheduler.describe(appId);
    expect(desc?.rolesStatuses[0]?.replicas[0]?.reason).toBe(
      `the local server stopped; the orphaned process group ${stray.pid} was killed`,
    );
  });

  // Start times come from /proc; without it (macOS) a live pid is never killed, which this test would not show.
  it.runIf(existsSync('/proc/self/stat'))(
    'does not kill a process that merely reuses a recorded pid',
    async () => {
      const appId = await h.scheduler.submit(shApp('reused', 'true'));
      await h.scheduler.waitForExit(appId);
      stray = spawn('sleep', ['60'], { detached: true, stdio: 'ignore' });
      await new Promise((resolve) => stray?.once('spawn', resolve));
      await orphan(h, appId, [stray.pid as number]);
      const file = path.join(h.dataDir, appId, 'app.json');
      const record = JSON.parse(await readFile(file, 'utf8')) as LocalAppRecord;
      const replica = record.replicas[0];
      expect(replica?.process?.startTime).toBeDefined();
      if (replica?.process) replica.process.startTime = String(Number(replica.process.startTime) - 1);
      await writeAppRecord(h.dataDir, record);
      const desc = await h.restart().describe(appId);
      expect(desc?.state).toBe('FAILED');
      expect(desc?.rolesStatuses[0]?.replicas[0]?.reason).toBe(
        'the local server stopped before this replica finished; its exit code is unknown',
      );
      expect(isAlive(stray.pid as number)).toBe(true);
    },
  );
});
