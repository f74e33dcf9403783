/**
 * local_cwd with a workspace: the replicas start in the app's own copy of the archive, unpacked after the app
 * is recorded (off the request's path), never used half made; the copy is removed with the app or some time
 * after it ended.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LocalAppRecord } from '../../../lib/schedulers/local-cwd/index.js';
import { workspaceCopyOf } from '../../../lib/schedulers/local-cwd/translate.js';
import { type AppDef, type JobWorkspace, ValidationError } from '../../../lib/specs/index.js';
import { blockedArchive, storeArchive, tarGzOf } from '../../helpers/workspace-archives.js';
import { appOf, type Harness, makeHarness, shApp } from './helpers.js';

const CRASHING_UNPACK = fileURLToPath(
  new URL('../../fixtures/local-cwd/crashing-unpack.ts', import.meta.url),
);

let h: Harness;
let archives: string;

beforeEach(async () => {
  h = await makeHarness({ killGracePeriodMs: 300 });
  archives = path.join(path.dirname(h.dataDir), 'archives');
});
afterEach(() => h.cleanup());

const SOURCE = [
  { name: 'data.txt', body: 'from the archive\n' },
  { name: 'bin', type: 'directory' as const, mode: 0o755 },
  { name: 'bin/run.sh', body: 'cat data.txt\npwd\n', mode: 0o755 },
];

/** Dry-runs (validated) and schedules `app` with `workspace`, as the Runner does. */
async function runIn(app: AppDef, workspace: JobWorkspace, cfg = {}): Promise<string> {
  return h.scheduler.schedule(h.scheduler.validatedDryrun(app, cfg, workspace));
}

async function logOf(appId: string): Promise<string[]> {
  return (await h.scheduler.readLogs(appId, { role: 'worker', streams: 'stdout' })).lines;
}

async function recordOf(appId: string): Promise<LocalAppRecord> {
  return JSON.parse(await readFile(path.join(h.dataDir, appId, 'app.json'), 'utf8')) as LocalAppRecord;
}

/** Writes `bytes` into the FIFO standing for an archive (resolves once a reader took them all). */
function feed(fifo: string, bytes: Buffer): Promise<void> {
  return writeFile(fifo, bytes);
}

describe('local_cwd with a workspace', () => {
  it("runs the replicas in the app's own copy of the archive, with img_root there and cfg.cwd left unset", async () => {
    const workspace = await storeArchive(archives, await tarGzOf(SOURCE));
    const appId = await runIn(
      appOf('ws', { entrypoint: 'bin/run.sh', env: { ROOT: '${img_root}' } }),
      workspace,
    );
    const desc = await h.scheduler.waitForExit(appId);
    expect(desc.state, desc.msg).toBe('SUCCEEDED');
    const copy = workspaceCopyOf(h.dataDir, appId);
    expect(await logOf(appId)).toEqual(['from the archive', copy]);
    const record = await recordOf(appId);
    expect(record.cfg.cwd).toBeNull();
    expect(record.request.replicas[0]?.env.ROOT).toBe(copy);
    expect(record.request.workspace).toEqual({
      sha256: workspace.sha256,
      fileCount: 2,
      archive: workspace.archive,
      dir: copy,
    });
  });

  it('answers once the app is recorded, before its copy is unpacked, and starts the replicas when it is whole', async () => {
    const bytes = await tarGzOf(SOURCE);
    const workspace = await blockedArchive(archives, bytes);
    const appId = await runIn(appOf('blocked', { entrypoint: 'bin/run.sh' }), workspace);
    // The archive cannot have been read yet: nothing has been written into its FIFO.
    const waiting = await h.scheduler.describe(appId);
    expect(waiting?.state).toBe('SUBMITTED');
    expect(waiting?.stateReason?.text).toBe('unpacking its workspace (2 files), then starting 1 replica');
    expect(existsSync(workspaceCopyOf(h.dataDir, appId))).toBe(false);
    await feed(workspace.archive, bytes);
    const desc = await h.scheduler.waitForExit(appId);
    expect(desc.state, desc.msg).toBe('SUCCEEDED');
    expect((await logOf(appId))[0]).toBe('from the archive');
  });

  it('starts no replica of an app cancelled while its copy is unpacked: it ends CANCELLED', async () => {
    const bytes = await tarGzOf(SOURCE);
    const workspace = await blockedArchive(archives, bytes);
    const marker = path.join(path.dirname(h.dataDir), 'ran');
    const appId = await runIn(shApp('cancelled', `touch ${marker}`), workspace);
    const cancelled = h.scheduler.cancel(appId);
    await feed(workspace.archive, bytes);
    await cancelled;
    const desc = await h.scheduler.waitForExit(appId);
    expect(desc.state).toBe('CANCELLED');
    expect(existsSync(marker)).toBe(false);
    expect((await recordOf(appId)).replicas[0]?.process).toBeUndefined();
  });

  it('ends the app FAILED with the reason when its copy cannot be unpacked, leaving no half copy', async () => {
    const workspace = await storeArchive(archives, await tarGzOf(SOURCE));
    // The archive is damaged after it was checked and stored.
    await writeFile(workspace.archive, 'not an archive any more');
    const appId = await runIn(shApp('damaged', 'true'), workspace);
    const desc = await h.scheduler.waitForExit(appId);
    expect(desc.state).toBe('FAILED');
    expect(desc.msg).toContain('its workspace could not be unpacked: the archive is not a readable tar.gz');
    expect(await readdir(path.join(h.dataDir, '.workspaces'))).toEqual(['.unpacking']);
    expect(await readdir(path.join(h.dataDir, '.workspaces', '.unpacking'))).toEqual([]);
  });

  it('refuses an entrypoint found neither on PATH nor in the archive, naming it, before anything is recorded', async () => {
    const workspace = await storeArchive(archives, await tarGzOf(SOURCE));
    const missing = () =>
      h.scheduler.validatedDryrun(appOf('typo', { entrypoint: 'bin/rnu.sh' }), {}, workspace);
    expect(missing).toThrow(ValidationError);
    expect(missing).toThrow(/app\.roles\.0\.entrypoint/);
    // Not executable in the archive (data.txt is 0644): refused too.
    expect(() =>
      h.scheduler.validatedDryrun(appOf('data', { entrypoint: './data.txt' }), {}, workspace),
    ).toThrow(/app\.roles\.0\.entrypoint/);
    expect(await readdir(h.dataDir).catch(() => [])).toEqual([]);
  });

  it('refuses cfg.cwd given with a workspace, naming cfg.cwd', async () => {
    const workspace = await storeArchive(archives, await tarGzOf(SOURCE));
    const both = () =>
      h.scheduler.validatedDryrun(shApp('both', 'true'), { cwd: path.dirname(h.dataDir) }, workspace);
    expect(both).toThrow(/cfg\.cwd: the replicas start in the workspace/);
  });

  it('dry-runs an archive not stored yet (no index: a dry run uploads nothing), checking entrypoints only outside it', async () => {
    const unstored = {
      sha256: 'cd'.repeat(32),
      size: 0,
      fileCount: 0,
      archive: path.join(archives, `${'cd'.repeat(32)}.tar.gz`),
    };
    const dry = h.scheduler.validatedDryrun(appOf('unstored', { entrypoint: 'bin/run.sh' }), {}, unstored);
    expect(JSON.stringify(dry.request)).toContain(unstored.archive);
    expect(() =>
      h.scheduler.validatedDryrun(appOf('outside', { entrypoint: '/no/such/tool' }), {}, unstored),
    ).toThrow(/app\.roles\.0\.entrypoint/);
  });

  it("removes the app's copy when the app is deleted, and keeps its logs", async () => {
    const workspace = await storeArchive(archives, await tarGzOf(SOURCE));
    const appId = await runIn(appOf('deleted', { entrypoint: 'bin/run.sh' }), workspace);
    await h.scheduler.waitForExit(appId);
    expect(existsSync(workspaceCopyOf(h.dataDir, appId))).toBe(true);
    await h.scheduler.delete(appId);
    expect(existsSync(workspaceCopyOf(h.dataDir, appId))).toBe(false);
    expect(await readdir(path.join(h.dataDir, '.workspaces', '.removing'))).toEqual([]);
    expect((await logOf(appId))[0]).toBe('from the archive');
  });
});

describe('LocalCwdScheduler.sweepWorkspaceCopies', () => {
  it('removes the copies of apps that ended longer ago than the retention and what crashes left, never a running app’s', async () => {
    const workspace = await storeArchive(archives, await tarGzOf(SOURCE));
    const ended = await runIn(shApp('ended', 'true'), workspace);
    await h.scheduler.waitForExit(ended);
    const go = path.join(path.dirname(h.dataDir), 'go');
    const running = await runIn(shApp('running', `while [ ! -f ${go} ]; do sleep 0.02; done`), workspace);
    // What crashes left: a copy half unpacked for an app that ended, a removal interrupted.
    const copies = path.join(h.dataDir, '.workspaces');
    await mkdir(path.join(copies, '.unpacking', ended), { recursive: true });
    await mkdir(path.join(copies, '.removing', 'abandoned', 'sub'), { recursive: true });

    const finishedAt = (await recordOf(ended)).finishedAt as number;
    await h.scheduler.sweepWorkspaceCopies(finishedAt + 1000);
    // Within the retention (a day by default): both copies stay; the leftovers go.
    expect((await readdir(copies)).sort()).toEqual(['.removing', '.unpacking', ended, running].sort());
    expect(await readdir(path.join(copies, '.unpacking'))).toEqual([]);
    expect(await readdir(path.join(copies, '.removing'))).toEqual([]);

    await h.scheduler.sweepWorkspaceCopies(finishedAt + 2 * 86_400_000);
    expect(existsSync(workspaceCopyOf(h.dataDir, ended))).toBe(false);
    expect(existsSync(workspaceCopyOf(h.dataDir, running))).toBe(true);
    await writeFile(go, '');
    expect((await h.scheduler.waitForExit(running)).state).toBe('SUCCEEDED');
  });
});

describe('local_cwd killed while it unpacks a copy', () => {
  it('leaves no copy under the app’s name; the next server fails the app (no replica ran) and removes the half copy', async () => {
    // 300 files of random text: half the archive holds many whole files.
    const entries = Array.from({ length: 300 }, (_, i) => ({
      name: `f${i}.txt`,
      body: randomBytes(1500).toString('base64'),
    }));
    const bytes = await tarGzOf(entries);
    const workspace = await blockedArchive(archives, bytes);
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', CRASHING_UNPACK, h.dataDir, path.dirname(h.dataDir), JSON.stringify(workspace)],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const exited = new Promise((resolve) => child.once('exit', resolve));
    const appId = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout?.on('data', (chunk: Buffer) => {
        out += chunk.toString('utf8');
        if (out.includes('\n')) resolve(out.trim());
      });
      child.once('exit', (code) => reject(new Error(`the scheduler exited early (${code})`)));
    });
    const fifo = createWriteStream(workspace.archive);
    fifo.on('error', () => undefined); // EPIPE once the reader is killed
    fifo.write(bytes.subarray(0, bytes.length / 2));
    const half = path.join(h.dataDir, '.workspaces', '.unpacking', appId);
    for (let i = 0; i < 400 && (await readdir(half).catch(() => [])).length < 10; i++) {
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect((await readdir(half)).length).toBeGreaterThanOrEqual(10);
    child.kill('SIGKILL');
    await exited;
    fifo.destroy();
    expect(existsSync(workspaceCopyOf(h.dataDir, appId))).toBe(false);

    const restarted = h.restart();
    expect(await restarted.recover()).toEqual([appId]);
    const desc = await restarted.waitForExit(appId);
    expect(desc.state).toBe('FAILED');
    expect(desc.msg).toContain('the local server stopped before this replica started');
    await restarted.sweepWorkspaceCopies();
    expect(existsSync(half)).toBe(false);
    expect(existsSync(workspaceCopyOf(h.dataDir, appId))).toBe(false);
  });
});
