import { chmod, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SchedulerError } from '../../../lib/schedulers/index.js';
import { type LocalAppRecord, SERVER_STOPPED_REASON } from '../../../lib/schedulers/local-cwd/index.js';
import {
  type AppState,
  appStatusFromDescribe,
  isTerminal,
  makeAppDef,
  makeRole,
  stateRank,
  ValidationError,
} from '../../../lib/specs/index.js';
import { appOf, type Harness, isAlive, makeHarness, shApp, waitForLine } from './helpers.js';

const readAll = async (h: Harness, appId: string, query: Parameters<Harness['scheduler']['readLogs']>[1]) =>
  (await h.scheduler.readLogs(appId, query)).lines;

describe('LocalCwdScheduler', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await makeHarness({ killGracePeriodMs: 300 });
  });
  afterEach(() => h.cleanup());

  it('runs echo to SUCCEEDED with its output in the stdout, stderr and combined logs', async () => {
    const appId = await h.scheduler.submit(shApp('hello', 'echo hi; echo oops >&2'));
    const desc = await h.scheduler.waitForExit(appId);
    expect(desc.state).toBe('SUCCEEDED');
    expect(desc.rolesStatuses[0]?.replicas[0]).toMatchObject({ id: 0, state: 'SUCCEEDED', exitCode: 0 });
    expect(await readAll(h, appId, { role: 'worker', streams: 'stdout' })).toEqual(['hi']);
    expect(await readAll(h, appId, { role: 'worker', streams: 'stderr' })).toEqual(['oops']);
    expect((await readAll(h, appId, { role: 'worker' })).sort()).toEqual(['hi', 'oops']);
  });

  it('reports a non-zero exit as FAILED with the exit code and a reason naming the replica', async () => {
    const appId = await h.scheduler.submit(shApp('fail', 'echo bad >&2; exit 3'));
    const desc = await h.scheduler.waitForExit(appId);
    expect(desc.state).toBe('FAILED');
    expect(desc.msg).toBe("worker[0] exited with code 3; last lines of worker[0]'s stderr:\n  bad");
    const change = h.changes.find((c) => c.appId === appId && c.state === 'FAILED');
    expect(change?.reason).toBe(desc.msg);
    expect(desc.rolesStatuses[0]?.replicas[0]).toMatchObject({
      state: 'FAILED',
      exitCode: 3,
      reason: 'exited with code 3',
    });
    expect(appStatusFromDescribe(desc).format()).toContain('worker[0]:FAILED');
  });

  it('starts every replica with the TorchX env vars and its own replica id', async () => {
    const script =
      'echo "$TORCHX_REPLICA_IDX ${replica_id} $TORCHX_RANK0_HOST $TORCHX_ROLE_NAME ${app_id} $FOO"';
    const appId = await h.scheduler.submit(
      shApp('pair', script, { numReplicas: 2, env: { FOO: 'foo-${replica_id}' } }),
    );
    expect((await h.scheduler.waitForExit(appId)).state).toBe('SUCCEEDED');
    for (const replica of [0, 1]) {
      expect(await readAll(h, appId, { role: 'worker', replica })).toEqual([
        `${replica} ${replica} localhost worker ${appId} foo-${replica}`,
      ]);
    }
  });

  it('runs several roles, each replica in the working directory and without a shell around the entrypoint', async () => {
    const app = makeAppDef({
      name: 'roles',
      roles: [
        makeRole({ name: 'ps', image: '.', entrypoint: 'pwd' }),
        makeRole({ name: 'args', image: '.', entrypoint: 'printf', args: ['%s\\n', '$HOME', 'a b', '; ls'] }),
      ],
    });
    const appId = await h.scheduler.submit(app);
    const desc = await h.scheduler.waitForExit(appId);
    expect(desc.state).toBe('SUCCEEDED');
    expect(desc.rolesStatuses.map((r) => r.role)).toEqual(['ps', 'args']);
    expect(await readAll(h, appId, { role: 'ps' })).toEqual([path.dirname(h.dataDir)]);
    expect(await readAll(h, appId, { role: 'args' })).toEqual(['$HOME', 'a b', '; ls']);
  });

  it('prefers an executable in the working directory over PATH with prepend_cwd', async () => {
    const root = path.dirname(h.dataDir);
    await writeFile(path.join(root, 'echo'), '#!/bin/sh\necho "from cwd: $*"\n');
    await chmod(path.join(root, 'echo'), 0o755);
    const app = appOf('shadow', { entrypoint: 'echo', args: ['x'] });
    const plain = await h.scheduler.submit(app);
    const prepended = await h.scheduler.submit(app, { prepend_cwd: true });
    await h.scheduler.waitForExit(plain);
    await h.scheduler.waitForExit(prepended);
    expect(await readAll(h, plain, { role: 'worker' })).toEqual(['x']);
    expect(await readAll(h, prepended, { role: 'worker' })).toEqual(['from cwd: x']);
  });

  it('reports RUNNING once all replicas started, then exactly one terminal change, in order', async () => {
    const script = 'if [ "$TORCHX_REPLICA_IDX" = 2 ]; then exit 2; fi; echo ok';
    const appId = await h.scheduler.submit(shApp('events', script, { numReplicas: 3 }));
    await h.scheduler.waitForExit(appId);
    const mine = h.changes.filter((c) => c.appId === appId);
    const states = mine.map((c) => c.state);
    expect(states[0]).toBe('RUNNING');
    expect(states.filter((s) => isTerminal(s))).toEqual(['FAILED']);
    expect(isTerminal(states[states.length - 1] as AppState)).toBe(true);
    for (let i = 1; i < mine.length; i++) {
      expect(stateRank(mine[i]?.state as AppState)).toBeGreaterThanOrEqual(
        stateRank(mine[i - 1]?.state as AppState),
      );
      expect(mine[i]?.eventTime).toBeGreaterThanOrEqual(mine[i - 1]?.eventTime as number);
    }
    const terminal = mine[mine.length - 1];
    expect(terminal).toMatchObject({ source: 'local', attempt: 0, numRestarts: 0 });
    expect(terminal?.reason).toMatch(/^worker\[2\] exited with code 2/);
    const replicas = terminal?.roles?.[0]?.replicas ?? [];
    expect(replicas.map((r) => r.id)).toEqual([0, 1, 2]);
    expect(replicas[2]).toMatchObject({ state: 'FAILED', exitCode: 2 });
    // The others either finished first or were stopped by the failure.
    for (const r of replicas.slice(0, 2)) expect(['SUCCEEDED', 'CANCELLED']).toContain(r.state);
  });

  it('cancels a sleeping replica with SIGTERM to CANCELLED', async () => {
    const appId = await h.scheduler.submit(appOf('sleepy', { entrypoint: 'sleep', args: ['60'] }));
    expect((await h.scheduler.describe(appId))?.state).toBe('RUNNING');
    await h.scheduler.cancel(appId, 'user asked');
    const desc = await h.scheduler.waitForExit(appId);
    expect(desc.state).toBe('CANCELLED');
    expect(desc.msg).toBe('user asked');
    expect(desc.rolesStatuses[0]?.replicas[0]).toMatchObject({ state: 'CANCELLED', exitCode: 143 });
    expect(h.changes.filter((c) => c.appId === appId && isTerminal(c.state)).map((c) => c.state)).toEqual([
      'CANCELLED',
    ]);
    await h.scheduler.cancel(appId);
    expect(h.changes.filter((c) => c.appId === appId && isTerminal(c.state))).toHaveLength(1);
  });

  it("kills the replica's whole process group, so children of sh -c die too", async () => {
    const appId = await h.scheduler.submit(shApp('tree', 'sleep 60 & echo "child $!"; wait'));
    await waitForLine(h.scheduler, appId, 'child ');
    const [line] = await readAll(h, appId, { role: 'worker' });
    const childPid = Number(line?.split(' ')[1]);
    expect(isAlive(childPid)).toBe(true);
    await h.scheduler.cancel(appId);
    expect(isAlive(childPid)).toBe(false);
  });

  it('sends SIGKILL after the grace period to a replica that ignores SIGTERM', async () => {
    const appId = await h.scheduler.submit(
      shApp('stubborn', 'trap "" TERM; echo ready; while :; do sleep 1; done'),
    );
    await waitForLine(h.scheduler, appId, 'ready');
    await h.scheduler.cancel(appId);
    const record = JSON.parse(
      await readFile(path.join(h.dataDir, appId, 'app.json'), 'utf8'),
    ) as LocalAppRecord;
    expect(record.state).toBe('CANCELLED');
    expect(record.replicas[0]).toMatchObject({ state: 'CANCELLED', signal: 'SIGKILL', exitCode: 137 });
  });

  it('fails fast: when one replica fails, the others are terminated and the app is FAILED', async () => {
    const script = 'if [ "$TORCHX_REPLICA_IDX" = 1 ]; then exit 7; fi; exec sleep 60';
    const appId = await h.scheduler.submit(shApp('fast', script, { numReplicas: 2 }));
    const desc = await h.scheduler.waitForExit(appId);
    expect(desc.state).toBe('FAILED');
    expect(desc.msg).toBe('worker[1] exited with code 7; 1 other replica(s) were terminated');
    const [sleeper, failed] = desc.rolesStatuses[0]?.replicas ?? [];
    expect(failed).toMatchObject({ state: 'FAILED', exitCode: 7 });
    expect(sleeper).toMatchObject({ state: 'CANCELLED', exitCode: 143 });
    expect(sleeper?.reason).toContain('terminated because the app failed');
  });

  it('fails the app when a replica cannot start, and terminates the replicas that did', async () => {
    const root = path.dirname(h.dataDir);
    await writeFile(path.join(root, 'broken'), '#!/nonexistent/interpreter\n');
    await chmod(path.join(root, 'broken'), 0o755);
    const app = makeAppDef({
      name: 'nostart',
      roles: [
        makeRole({ name: 'sleeper', image: '.', entrypoint: 'sleep', args: ['60'] }),
        makeRole({ name: 'broken', image: '.', entrypoint: './broken' }),
      ],
    });
    const appId = await h.scheduler.submit(app);
    const desc = await h.scheduler.waitForExit(appId);
    expect(desc.state).toBe('FAILED');
    // The wrapper shell reports an entrypoint it cannot execute as exit code 127, with its message on stderr.
    expect(desc.msg).toMatch(
      /^broken\[0\] exited with code 127; 1 other replica\(s\) were terminated; last lines of broken\[0\]'s stderr:\n.*broken: not found$/,
    );
    expect(desc.rolesStatuses.map((r) => r.replicas[0]?.state)).toEqual(['CANCELLED', 'FAILED']);
    expect(h.changes.filter((c) => c.appId === appId && isTerminal(c.state)).map((c) => c.state)).toEqual([
      'FAILED',
    ]);
    const stderr = await h.scheduler.readLogs(appId, { role: 'broken', streams: 'stderr' });
    expect(stderr.lines.join('\n')).toMatch(/broken/);
  });

  it('puts the torchelastic error file of a failed replica in structuredErrorMsg', async () => {
    const error = { message: { message: 'boom', errorCode: 1, extraInfo: { timestamp: '1700000000' } } };
    const script = `printf '%s' '${JSON.stringify(error)}' > "$TORCHELASTIC_ERROR_FILE"; exit 1`;
    const appId = await h.scheduler.submit(shApp('errfile', script));
    const desc = await h.scheduler.waitForExit(appId);
    expect(JSON.parse(desc.structuredErrorMsg)).toEqual(error);
    expect(JSON.parse(desc.rolesStatuses[0]?.replicas[0]?.structuredErrorMsg ?? '')).toEqual(error);
  });

  it('describes and lists a finished app after a restart, and serves its logs', async () => {
    const appId = await h.scheduler.submit(shApp('persist', 'echo kept; exit 4'));
    const before = await h.scheduler.waitForExit(appId);
    await h.scheduler.close();
    const restarted = h.restart();
    const after = await restarted.describe(appId);
    expect(after).toEqual(before);
    expect(after?.roles[0]).toMatchObject({ name: 'worker', entrypoint: 'sh', numReplicas: 1 });
    expect(await restarted.list()).toEqual([
      { appId, state: 'FAILED', appHandle: '<NOT_SET>', name: 'persist' },
    ]);
    expect((await restarted.readLogs(appId, { role: 'worker' })).lines).toEqual(['kept']);
  });

  it('ends running apps as FAILED when it closes, saying the local server stopped', async () => {
    const appId = await h.scheduler.submit(appOf('closing', { entrypoint: 'sleep', args: ['60'] }));
    await h.scheduler.close();
    const desc = await h.restart().describe(appId);
    expect(desc?.state).toBe('FAILED');
    expect(desc?.msg).toBe(SERVER_STOPPED_REASON);
    expect(h.changes.filter((c) => c.appId === appId).map((c) => c.state)).toEqual(['RUNNING', 'FAILED']);
    await expect(h.scheduler.submit(shApp('late', 'true'))).rejects.toThrow(SchedulerError);
  });

  it('leaves an app supervised by a sibling scheduler alone', async () => {
    const appId = await h.scheduler.submit(appOf('sibling', { entrypoint: 'sleep', args: ['60'] }));
    const sibling = h.restart();
    expect((await sibling.describe(appId))?.state).toBe('RUNNING');
    await expect(sibling.cancel(appId)).rejects.toThrow(/supervised by another local server/);
    await h.scheduler.cancel(appId);
    expect((await sibling.describe(appId))?.state).toBe('CANCELLED');
  });

  it('rejects an entrypoint it cannot find before writing anything', async () => {
    const info = h.scheduler.submitDryrun(appOf('ghost', { entrypoint: 'no-such-command-xyz' }));
    await expect(h.scheduler.schedule(info)).rejects.toThrow(ValidationError);
    await expect(readdir(h.dataDir)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('keeps the logs on delete, and removes them with purgeOnDelete', async () => {
    const kept = await h.scheduler.submit(appOf('keep', { entrypoint: 'sleep', args: ['60'] }));
    await h.scheduler.delete(kept);
    expect((await h.scheduler.describe(kept))?.state).toBe('CANCELLED');
    const purging = h.restart({ purgeOnDelete: true });
    const purged = await purging.submit(shApp('purge', 'echo bye'));
    await purging.waitForExit(purged);
    await purging.delete(purged);
    expect(await purging.describe(purged)).toBeUndefined();
    expect(await readdir(h.dataDir)).toEqual([kept]);
  });

  it('answers undefined for unknown apps and ids that are not directory names', async () => {
    expect(await h.scheduler.describe('nope-123')).toBeUndefined();
    expect(await h.scheduler.describe('../..')).toBeUndefined();
    expect(await h.scheduler.list()).toEqual([]);
    await expect(h.scheduler.cancel('nope-123')).resolves.toBeUndefined();
  });
});
