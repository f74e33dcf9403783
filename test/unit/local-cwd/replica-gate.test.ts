import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  APP_RECORD_VERSION,
  LiveApp,
  type LocalAppRecord,
  NEVER_RAN_MARK,
  readRecordedExit,
  spawnGatedReplica,
} from '../../../lib/schedulers/local-cwd/index.js';
import type { LocalCwdReplicaSpec } from '../../../lib/schedulers/local-cwd/translate.js';
import { NONE } from '../../../lib/specs/index.js';
import { makeHarness, shApp, TEST_PATH } from './helpers.js';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'txs-gate-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/** A replica spec whose entrypoint is `sh -c <script>`, logging under `root/<name>`. */
async function specOf(name: string, script: string): Promise<LocalCwdReplicaSpec> {
  const dir = path.join(root, name);
  await mkdir(dir);
  return {
    role: 'worker',
    replicaId: 0,
    entrypoint: 'sh',
    args: ['-c', script],
    env: { PATH: TEST_PATH },
    cwd: root,
    stdout: path.join(dir, 'stdout.log'),
    stderr: path.join(dir, 'stderr.log'),
    combined: path.join(dir, 'combined.log'),
  };
}

function exitOf(child: { once(event: 'exit', listener: (code: number | null) => void): unknown }) {
  return new Promise<number | null>((resolve) => child.once('exit', resolve));
}

describe('spawnGatedReplica', () => {
  it('runs nothing until released, then records the exit status in the preallocated exit file', async () => {
    const ran = path.join(root, 'ran');
    const spec = await specOf('released', `touch ${ran}; exit 7`);
    const gated = spawnGatedReplica(spec, '/bin/sh', spec.env, 0o022);
    const exited = exitOf(gated.child);
    // Held at the gate: the exit file exists at its full size, and says nothing yet.
    expect(await readFile(path.join(root, 'released', 'exitcode'), 'utf8')).toMatch(/^ +\n$/);
    await new Promise((r) => setTimeout(r, 100));
    expect(existsSync(ran)).toBe(false);
    expect(await readRecordedExit(spec)).toEqual({ kind: 'unknown' });
    gated.release();
    expect(await exited).toBe(7);
    expect(existsSync(ran)).toBe(true);
    expect(await readRecordedExit(spec)).toEqual({ kind: 'exited', code: 7 });
  });

  it('never runs the entrypoint when its gate closes unreleased (the server died or stopped the app)', async () => {
    const ran = path.join(root, 'ran');
    const spec = await specOf('abandoned', `touch ${ran}`);
    const gated = spawnGatedReplica(spec, '/bin/sh', spec.env, 0o022);
    const exited = exitOf(gated.child);
    gated.abandon();
    expect(await exited).toBe(125);
    expect(existsSync(ran)).toBe(false);
    expect((await readFile(path.join(root, 'abandoned', 'exitcode'), 'utf8')).trim()).toBe(NEVER_RAN_MARK);
    expect(await readRecordedExit(spec)).toEqual({ kind: 'never-ran' });
  });
});

describe('LiveApp.start', () => {
  it('starts none of the replicas of an app cancelled while they start', async () => {
    const h = await makeHarness({ killGracePeriodMs: 300 });
    try {
      const ran = path.join(root, 'ran');
      const info = h.scheduler.submitDryrun(shApp('early', `touch ${ran}-$$`, { numReplicas: 20 }));
      const { request } = info;
      await mkdir(request.logDir, { recursive: true });
      const record: LocalAppRecord = {
        version: APP_RECORD_VERSION,
        appId: request.appId,
        session: 'test',
        app: info.app,
        cfg: info.cfg,
        request,
        state: 'SUBMITTED',
        structuredErrorMsg: NONE,
        supervisor: { pid: process.pid, instance: 'test' },
        replicas: request.replicas.map((r) => ({ role: r.role, replicaId: r.replicaId, state: 'PENDING' })),
        createdAt: 0,
        updatedAt: 0,
      };
      let cancelled: Promise<LocalAppRecord> | undefined;
      await LiveApp.start(
        record,
        request.replicas.map(() => '/bin/sh'),
        {
          dataDir: h.dataDir,
          now: Date.now,
          hostname: 'test',
          killGracePeriodMs: 300,
          baseEnv: { PATH: TEST_PATH },
          replicaUmask: 0o022,
          pollIntervalMs: 20,
          onStateChange: () => undefined,
          onError: (error) => h.errors.push(error),
        },
        // Cancelled as soon as it exists, before any replica process.
        (app) => {
          cancelled = app.cancel('changed my mind');
        },
      );
      const final = await cancelled;
      expect(final?.state).toBe('CANCELLED');
      expect(final?.replicas.map((r) => r.state)).toEqual(request.replicas.map(() => 'CANCELLED'));
      expect((await readdir(root)).filter((name) => name.startsWith('ran-'))).toEqual([]);
    } finally {
      await h.cleanup();
    }
  });
});
