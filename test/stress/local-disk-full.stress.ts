/**
 * `npm start`'s server as a real process with its data directory on a small tmpfs that a job's own output
 * fills: the server survives, answers writes with 503 DiskFull naming the full place, and the job, which
 * exited 0, reads SUCCEEDED once space is freed, and after a kill -9 and a restart too. Needs Linux and root
 * (it mounts a tmpfs), so it runs in `npm run test:stress` (CI runs as root), not in `npm test`; the
 * store's side of it runs everywhere in test/unit/local/level-guard.test.ts.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readExitCode } from '../../lib/schedulers/local-cwd/index.js';
import {
  json,
  killAllServers,
  killServer,
  localStateOf,
  postApp,
  startServerProcess,
  until,
} from '../helpers/local-server-process.js';

const root = mkdtempSync(join(tmpdir(), 'txs-disk-full-'));
const disk = join(root, 'disk');
const tokenFile = join(root, 'server.token');

/** Mounts an 8 MiB tmpfs at `disk`; throws, saying what is needed, where this user may not mount. */
function mountSmallDisk(): boolean {
  mkdirSync(disk);
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m,mode=0700', 'tmpfs', disk], { stdio: 'ignore' });
    return true;
  } catch (error) {
    throw new Error(`this suite mounts a small tmpfs and needs Linux and root: ${String(error)}`);
  }
}

const mounted = mountSmallDisk();

afterAll(() => {
  killAllServers();
  if (mounted) execFileSync('umount', ['-l', disk]);
  rmSync(root, { recursive: true, force: true });
});

describe('local server whose data disk a job fills', () => {
  it('keeps running, answers 503 DiskFull, and records the job that exited 0 as SUCCEEDED', {
    timeout: 120_000,
  }, async () => {
    const dataDir = join(disk, 'data');
    // What the user later deletes to make room.
    const ballast = join(disk, 'ballast');
    writeFileSync(ballast, Buffer.alloc(2 * 1024 * 1024));
    const first = await startServerProcess(dataDir, tokenFile);
    // Writes until the disk is full (its writer then fails on ENOSPC), and exits 0 anyway.
    const filler = await postApp(first.url, {
      scheduler: 'local_cwd',
      component: 'utils.sh',
      args: ['sh', '-c', 'head -c 100000000 /dev/zero | tr "\\0" x; exit 0'],
    });
    expect(filler.status).toBe(201);
    const appId = String(filler.body.appId);
    const stdout = join(dataDir, 'local_cwd', appId, 'sh', '0', 'stdout.log');
    await until(async () => (await readExitCode({ stdout })) === 0, 'the job to record exit 0');

    // The server is up, and a write is refused with what to do.
    const refused = await postApp(first.url, {
      scheduler: 'local_cwd',
      component: 'utils.sh',
      args: ['true'],
    });
    expect(refused.status).toBe(503);
    expect(refused.body.error).toMatchObject({ code: 'DiskFull' });
    expect(String((refused.body.error as { message: string }).message)).toContain(`disk full at ${dataDir}`);
    expect(first.process.exitCode).toBeNull();
    expect((await json(`${first.url}/v1/apps/local_cwd/${appId}`)).status).toBe(200);

    // Space freed: the record catches up without a restart.
    rmSync(ballast);
    await until(async () => (await localStateOf(first.url, appId)) === 'SUCCEEDED', 'SUCCEEDED');

    // And stays true across a crash and a restart.
    await killServer(first);
    const second = await startServerProcess(dataDir, tokenFile);
    const status = await json(`${second.url}/v1/apps/local_cwd/${appId}`);
    expect(status.body.status).toMatchObject({ state: 'SUCCEEDED' });
    await killServer(second);
  });
});
