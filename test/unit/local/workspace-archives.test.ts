/**
 * The local server's archive store: a run resolves a stored (checked, indexed) archive and marks it used;
 * the sweep removes archives unused for the retention period and what crashed uploads left, never an upload
 * in flight.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { archivesInUse, WorkspaceArchives } from '../../../lib/local/workspace-archives.js';
import type { ListAppsPage } from '../../../lib/runner/index.js';
import { type AppRecord, ValidationError } from '../../../lib/specs/index.js';
import { tarGzOf } from '../../helpers/workspace-archives.js';

const DAY = 86_400_000;

let dataDir: string;
let archives: WorkspaceArchives;
let server: Server;
let url: string;

beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'txs-archives-'));
  archives = new WorkspaceArchives(dataDir, 30);
  server = createServer((req, res) => void archives.serve(req, res, req.url ?? ''));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await rm(dataDir, { recursive: true, force: true });
});

const stored = () => readdir(join(dataDir, 'workspaces', 'archives')).catch(() => []);

/** Uploads a small archive through `PUT`; returns its SHA-256. */
async function upload(text: string): Promise<string> {
  const body = await tarGzOf([{ name: 'a.txt', body: text }]);
  const sha256 = createHash('sha256').update(body).digest('hex');
  const answer = await fetch(`${url}/v1/workspaces/${sha256}`, { method: 'PUT', body });
  expect(answer.status).toBe(201);
  return sha256;
}

/** Dates `name` in the archives directory `daysAgo` days back. */
async function age(name: string, daysAgo: number): Promise<void> {
  const when = new Date(Date.now() - daysAgo * DAY);
  await utimes(join(dataDir, 'workspaces', 'archives', name), when, when);
}

describe('WorkspaceArchives.resolve', () => {
  it('gives a stored archive as a workspace: its path, size and file count', async () => {
    const sha256 = await upload('resolved');
    const workspace = archives.resolve(sha256);
    expect(workspace).toMatchObject({ sha256, fileCount: 1 });
    expect(workspace.archive).toBe(join(dataDir, 'workspaces', 'archives', `${sha256}.tar.gz`));
  });

  it('refuses an archive stored without its index (by an earlier version), naming workspace.sha256', async () => {
    const sha256 = await upload('unindexed');
    await rm(join(dataDir, 'workspaces', 'archives', `${sha256}.json`));
    expect(() => archives.resolve(sha256)).toThrow(ValidationError);
    expect(() => archives.resolve(sha256)).toThrow(/workspace\.sha256: no workspace archive/);
    // HEAD says it is not there either, so the client uploads it again (and it is checked then).
    expect((await fetch(`${url}/v1/workspaces/${sha256}`, { method: 'HEAD' })).status).toBe(404);
  });
});

describe('WorkspaceArchives.sweep', () => {
  it('removes archives unused for the retention period, and keeps one a run, a HEAD or an offer just named', async () => {
    const old = await upload('old');
    const usedAgain = await upload('used again');
    const recent = await upload('recent');
    for (const sha256 of [old, usedAgain]) {
      await age(`${sha256}.tar.gz`, 40);
      await age(`${sha256}.json`, 40);
    }
    await age(`${recent}.json`, 29);
    archives.resolve(usedAgain);
    // A client about to run asks whether the server holds it: that is a use too.
    const asked = await upload('asked');
    await age(`${asked}.json`, 40);
    expect((await fetch(`${url}/v1/workspaces/${asked}`, { method: 'HEAD' })).status).toBe(200);
    // So is POST /v1/workspaces finding it stored.
    const offered = await upload('offered');
    await age(`${offered}.json`, 40);
    expect(await archives.holds(offered)).toBe(true);
    expect(archives.sweep()).toEqual([old]);
    const kept = [usedAgain, recent, asked, offered];
    expect((await stored()).sort()).toEqual(
      kept.flatMap((sha256) => [`${sha256}.tar.gz`, `${sha256}.json`]).sort(),
    );
    expect(archives.sweep(Date.now() + 31 * DAY).sort()).toEqual(kept.sort());
    expect(await stored()).toEqual([]);
  });

  it('never removes an archive an app that has not ended names, however long unused', async () => {
    const live = await upload('live');
    const idle = await upload('idle');
    expect(archives.sweep(Date.now() + 60 * DAY, new Set([live]))).toEqual([idle]);
    expect((await stored()).sort()).toEqual([`${live}.json`, `${live}.tar.gz`]);
  });

  it('never touches an upload in flight, and removes what a crashed upload or PUT left a day ago', async () => {
    const dir = join(dataDir, 'workspaces', 'archives');
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, '.upload-0123456789abcdef'), 'half an archive');
    await age('.upload-0123456789abcdef', 2);
    const orphan = `${'e'.repeat(64)}.json`;
    await writeFile(join(dir, orphan), '{}');
    await age(orphan, 40);
    // An upload in flight: its body is half sent.
    const body = await tarGzOf([{ name: 'big.bin', body: randomBytes(100_000).toString('base64') }]);
    const sha256 = createHash('sha256').update(body).digest('hex');
    const put = request(`${url}/v1/workspaces/${sha256}`, {
      method: 'PUT',
      headers: { 'content-length': body.length },
    });
    const answered = new Promise<number>((resolve) =>
      put.on('response', (res) => resolve(res.statusCode ?? 0)),
    );
    put.write(body.subarray(0, 1000));
    let inFlight: string[] = [];
    for (let i = 0; i < 200 && inFlight.length === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      inFlight = (await stored()).filter((name) => name.startsWith('.upload-') && !name.includes('0123'));
    }
    expect(inFlight).toHaveLength(1);

    archives.sweep(Date.now() + 60 * DAY);
    expect(await stored()).toEqual(inFlight);
    put.end(body.subarray(1000));
    expect(await answered).toBe(201);
    expect((await stored()).sort()).toEqual([`${sha256}.json`, `${sha256}.tar.gz`]);
  });
});

describe('WorkspaceArchives.startSweeping', () => {
  it('stops only once the sweep in flight has finished, so the record store can be closed after it', async () => {
    let answer: (names: ReadonlySet<string>) => void = () => {};
    const asked = new Promise<ReadonlySet<string>>((resolve) => {
      answer = resolve;
    });
    const errors: unknown[] = [];
    let queried = false;
    const stop = archives.startSweeping(
      () => {
        queried = true;
        return asked;
      },
      (error) => errors.push(error),
    );
    await new Promise((resolve) => setImmediate(resolve));
    expect(queried).toBe(true);
    let stopped = false;
    const stopping = stop().then(() => {
      stopped = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(stopped).toBe(false);
    answer(new Set());
    await stopping;
    expect(stopped).toBe(true);
    expect(errors).toEqual([]);
  });
});

describe('archivesInUse', () => {
  it('names the archives of the apps that have not ended on the schedulers that take a workspace, page by page', async () => {
    const asked: string[] = [];
    const pages: Record<string, Array<{ records: Array<Partial<AppRecord>>; nextToken?: string }>> = {
      local_docker: [
        {
          records: [{ workspace: { sha256: 'a'.repeat(64), size: 1, fileCount: 1 } }, {}],
          nextToken: 'next',
        },
        { records: [{ workspace: { sha256: 'b'.repeat(64), size: 1, fileCount: 1 } }] },
      ],
      local_cwd: [{ records: [] }],
    };
    const store = {
      listActive: async (scheduler: string, _limit?: number, nextToken?: string) => {
        asked.push(`${scheduler}:${nextToken ?? ''}`);
        return (pages[scheduler]?.[nextToken === undefined ? 0 : 1] ?? { records: [] }) as ListAppsPage;
      },
    };
    const names = await archivesInUse(store, ['local_cwd', 'local_docker', 'lsf']);
    expect([...names].sort()).toEqual(['a'.repeat(64), 'b'.repeat(64)]);
    expect(asked).toEqual(['local_cwd:', 'local_docker:', 'local_docker:next']);
  });
});
