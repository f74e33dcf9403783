/**
 * `npm start`'s server as a real process, killed with SIGKILL while it starts the replicas of a 300-replica
 * app, then started again on the same data directory: every replica process is either adopted (and ends with
 * cancel) or stopped; none keeps running unknown to the server. Every process of the app carries a marker in
 * its environment, so the test finds them in /proc whatever the server recorded.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isTerminal } from '../../lib/specs/index.js';
import {
  json,
  killAllServers,
  killServer,
  localStateOf,
  postApp,
  type ServerProcess,
  startServerProcess,
  until,
} from '../helpers/local-server-process.js';

const REPLICAS = 300;
const MARK = 'TXS_SPAWN_CRASH_TEST';
const root = mkdtempSync(join(tmpdir(), 'txs-spawn-crash-'));
const tokenFile = join(root, 'server.token');
const marks: string[] = [];

/** Pids of live (not zombie) processes whose environment holds `MARK=<mark>`. */
function markedProcesses(mark: string): number[] {
  const needle = `${MARK}=${mark}\0`;
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      if (state === 'Z' || state === 'X') continue;
      if (readFileSync(`/proc/${name}/environ`, 'latin1').includes(needle)) pids.push(Number(name));
    } catch {
      // Gone meanwhile.
    }
  }
  return pids;
}

afterAll(() => {
  killAllServers();
  for (const mark of marks) {
    for (const pid of markedProcesses(mark)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Gone meanwhile.
      }
    }
  }
  rmSync(root, { recursive: true, force: true });
});

/** Submits the 300-replica app (each replica sleeps) without waiting for the answer. */
function submit(server: ServerProcess, mark: string): Promise<unknown> {
  const app = {
    name: 'many',
    roles: [
      {
        name: 'worker',
        image: '.',
        entrypoint: 'sleep',
        args: ['300'],
        numReplicas: REPLICAS,
        env: { [MARK]: mark },
      },
    ],
  };
  // The connection dies with the server: the answer, if any, does not matter.
  return postApp(server.url, { scheduler: 'local_cwd', app }).catch(() => undefined);
}

/** The id of the one app under `dataDir`. */
function onlyAppId(dataDir: string): string {
  const ids = readdirSync(join(dataDir, 'local_cwd'));
  expect(ids).toHaveLength(1);
  return ids[0] as string;
}

describe('local server killed while it starts a many-replica app', () => {
  it.each([
    ['halfway through the replicas', REPLICAS / 2],
    ['once every replica runs', REPLICAS],
  ])(
    'leaves no replica running that the restarted server does not stop or adopt, when killed %s',
    { timeout: 120_000 },
    async (_when, seen) => {
      const mark = randomBytes(6).toString('hex');
      marks.push(mark);
      const dataDir = join(root, mark);
      const first = await startServerProcess(dataDir, tokenFile);
      const answer = submit(first, mark);
      await until(() => markedProcesses(mark).length >= seen, `${seen} replica processes`);
      if (seen === REPLICAS) await answer;
      await killServer(first);

      const second = await startServerProcess(dataDir, tokenFile);
      const appId = onlyAppId(dataDir);
      const state = await localStateOf(second.url, appId);
      if (!isTerminal(state as never)) {
        // Adopted: every replica is the server's again, and cancel ends them all.
        const cancel = await json(`${second.url}/v1/apps/local_cwd/${appId}/cancel`, { method: 'POST' });
        expect(cancel.status).toBe(202);
      }
      await until(async () => isTerminal((await localStateOf(second.url, appId)) as never), 'the app to end');
      await until(() => markedProcesses(mark).length === 0, 'every replica process to end');
      expect(markedProcesses(mark)).toEqual([]);
      await killServer(second);
    },
  );
});
