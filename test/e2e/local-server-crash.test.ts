/**
 * `npm start`'s server as a real process, killed with SIGKILL while apps run, then started again on the same
 * data directory (dynalite persisted there): statuses are right from the first request, a job that exited 0
 * during the outage is SUCCEEDED, a printing job survived (no SIGPIPE) and is adopted, a silent one is
 * adopted and can be cancelled.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { processStartTime, readExitCode } from '../../lib/schedulers/local-cwd/index.js';
import {
  json,
  killAllServers,
  killServer,
  postApp,
  startServerProcess,
  localStateOf as stateOf,
  until,
} from '../helpers/local-server-process.js';

const root = mkdtempSync(join(tmpdir(), 'txs-crash-'));
const dataDir = join(root, 'data');
const tokenFile = join(root, 'server.token');

afterAll(() => {
  killAllServers();
  rmSync(root, { recursive: true, force: true });
});

const startServer = () => startServerProcess(dataDir, tokenFile);

async function run(url: string, args: string[]): Promise<string> {
  const reply = await postApp(url, { scheduler: 'local_cwd', component: 'utils.sh', args });
  expect(reply.status).toBe(201);
  return String(reply.body.appId);
}

const replicaDir = (appId: string) => join(dataDir, 'local_cwd', appId, 'sh', '0');

describe('local server crash and restart', () => {
  it('keeps every job right across kill -9 of the server', { timeout: 60_000 }, async () => {
    const first = await startServer();
    // The short job ends only once the server is dead (it waits for this file).
    const outage = join(root, 'outage');
    const ok = await run(first.url, [
      'sh',
      '-c',
      `while [ ! -e ${outage} ]; do sleep 0.02; done; echo finished`,
    ]);
    const go = join(root, 'go');
    const chatty = await run(first.url, [
      'sh',
      '-c',
      `i=0; while [ ! -e ${go} ]; do echo "tick $i"; i=$((i+1)); sleep 0.05; done; echo done`,
    ]);
    const silent = await run(first.url, ['sleep', '60']);
    for (const appId of [ok, chatty, silent]) expect(await stateOf(first.url, appId)).toBe('RUNNING');
    const silentPid = (
      JSON.parse(readFileSync(join(dataDir, 'local_cwd', silent, 'app.json'), 'utf8')) as {
        replicas: { process: { pid: number } }[];
      }
    ).replicas[0]?.process.pid as number;

    await killServer(first);
    writeFileSync(outage, '');
    const recorded = (appId: string) => readExitCode({ stdout: join(replicaDir(appId), 'stdout.log') });
    await until(async () => (await recorded(ok)) === 0, 'the short job to exit during the outage');
    expect(await recorded(chatty)).toBeUndefined();

    // The dead server left its lock and token file; the new one takes both over.
    const second = await startServer();
    expect(await stateOf(second.url, ok)).toBe('SUCCEEDED');
    expect(await stateOf(second.url, chatty)).toBe('RUNNING');
    expect(await stateOf(second.url, silent)).toBe('RUNNING');
    expect(processStartTime(silentPid) ?? 'gone').not.toBe('gone');

    // The printer wrote all through the outage; now let it finish.
    writeFileSync(go, '');
    await until(async () => (await stateOf(second.url, chatty)) === 'SUCCEEDED', 'the printer to finish');
    const logs = await json(`${second.url}/v1/apps/local_cwd/${chatty}/logs?limit=10000`);
    const lines = logs.body.lines as string[];
    expect(lines.length).toBeGreaterThan(1);
    expect(lines).toEqual([...Array.from({ length: lines.length - 1 }, (_, i) => `tick ${i}`), 'done']);
    expect((await json(`${second.url}/v1/apps/local_cwd/${ok}/logs`)).body.lines).toEqual(['finished']);

    const cancel = await json(`${second.url}/v1/apps/local_cwd/${silent}/cancel`, { method: 'POST' });
    expect(cancel.status).toBe(202);
    await until(async () => (await stateOf(second.url, silent)) === 'CANCELLED', 'the adopted job to cancel');
    await until(() => processStartTime(silentPid) === undefined, 'the adopted process to end');

    // A clean stop removes the token file and the lock.
    second.process.kill('SIGTERM');
    await new Promise((resolve) => second.process.once('exit', resolve));
    expect(existsSync(tokenFile)).toBe(false);
    expect(existsSync(join(dataDir, 'server.lock'))).toBe(false);
  });
});
