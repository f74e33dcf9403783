/**
 * local_docker with a Docker Engine, at the HTTP wire: a fake Engine API server on a Unix socket in a fresh
 * directory (no Docker daemon exists here). Bodies follow the Docker Engine API reference (v1.41):
 * ContainerCreate `{Id, Warnings}`, ContainerList summaries, ContainerInspect `State`, error `{message}`,
 * and the multiplexed log stream.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  DockerEngine,
  demuxDockerLog,
  dockerBytes,
  engineCreateBody,
  LocalDockerScheduler,
} from '../../../lib/schedulers/local-docker/index.js';
import { appOf, SUFFIX } from '../torchx-golden/cases.js';

interface FakeContainer {
  Id: string;
  name: string;
  body: { Image: string; Labels: Record<string, string> };
  status: string;
  exitCode: number;
  started: boolean;
  stopped: boolean;
}

let dir: string;
let server: Server;
let containers: FakeContainer[];
let calls: string[];
let failCreateAfter: number | undefined;

function frame(stream: number, text: string): Buffer {
  const payload = Buffer.from(text);
  const header = Buffer.alloc(8);
  header[0] = stream;
  header.writeUInt32BE(payload.length, 4);
  return Buffer.concat([header, payload]);
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'txs-docker-'));
  containers = [];
  calls = [];
  failCreateAfter = undefined;
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://docker');
      const path = url.pathname.replace(/^\/v1\.41/, '');
      calls.push(`${req.method} ${path}`);
      const json = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(body === undefined ? '' : JSON.stringify(body));
      };
      const byId = (id: string) => containers.find((c) => c.Id === id);
      const idOf = (action: string) => new RegExp(`^/containers/([^/]+)/${action}$`).exec(path)?.[1];
      let id: string | undefined;
      if (path === '/images/create') return json(200, undefined);
      if (path === '/networks/create')
        return json(409, { message: 'network with name torchx already exists' });
      if (path === '/containers/create') {
        if (failCreateAfter !== undefined && containers.length >= failCreateAfter) {
          return json(404, { message: 'No such image: ghcr.io/pytorch/torchx:0.8.0dev0' });
        }
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as FakeContainer['body'];
        const c = {
          Id: `id${containers.length}`,
          name: url.searchParams.get('name') ?? '',
          body,
          status: 'created',
          exitCode: 0,
          started: false,
          stopped: false,
        };
        containers.push(c);
        return json(201, { Id: c.Id, Warnings: [] });
      }
      if (path === '/containers/json') {
        const labels =
          (JSON.parse(url.searchParams.get('filters') ?? '{}') as { label?: string[] }).label ?? [];
        const match = containers.filter((c) =>
          labels.every((l) => {
            const [k = '', v] = l.split('=');
            return v === undefined ? k in c.body.Labels : c.body.Labels[k] === v;
          }),
        );
        return json(
          200,
          match.map((c) => ({
            Id: c.Id,
            Names: [`/${c.name}`],
            Image: c.body.Image,
            Labels: c.body.Labels,
            State: c.status,
            Status: c.status === 'exited' ? `Exited (${c.exitCode}) 3 seconds ago` : 'Up 2 seconds',
          })),
        );
      }
      id = idOf('start');
      if (id !== undefined) {
        const c = byId(id);
        if (c) Object.assign(c, { started: true, status: 'running' });
        return json(204, undefined);
      }
      id = idOf('stop');
      if (id !== undefined) {
        const c = byId(id);
        if (c?.status !== 'running') return json(304, undefined);
        Object.assign(c, { stopped: true, status: 'exited', exitCode: 137 });
        return json(204, undefined);
      }
      id = idOf('json');
      if (id !== undefined) {
        const c = byId(id);
        return json(200, { Id: c?.Id, State: { Status: c?.status, ExitCode: c?.exitCode } });
      }
      id = idOf('logs');
      if (id !== undefined) {
        res.writeHead(200, { 'content-type': 'application/vnd.docker.multiplexed-stream' });
        const out = url.searchParams.get('stdout') === '1' ? frame(1, 'out line\n') : Buffer.alloc(0);
        const err = url.searchParams.get('stderr') === '1' ? frame(2, 'err line\n') : Buffer.alloc(0);
        return res.end(Buffer.concat([out, err]));
      }
      return json(404, { message: 'page not found' });
    });
  });
  await new Promise<void>((resolve) => server.listen(join(dir, 'docker.sock'), resolve));
});

afterEach(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

function scheduler() {
  return new LocalDockerScheduler(
    { sessionName: 'torchx' },
    { engine: new DockerEngine(join(dir, 'docker.sock')), uniqueNamer: (n) => `${n}-${SUFFIX}` },
  );
}

describe('LocalDockerScheduler with a Docker Engine', () => {
  it('pulls, ensures the torchx network (already there is fine) and starts one container per replica', async () => {
    const s = scheduler();
    const info = s.submitDryrun(appOf({ title: 'utils.sh' }), {});
    await expect(s.schedule(info)).resolves.toBe(`sh-${SUFFIX}`);
    expect(calls.slice(0, 2)).toEqual(['POST /images/create', 'POST /networks/create']);
    expect(containers.map((c) => [c.name, c.started])).toEqual([
      [`sh-${SUFFIX}-sh-0`, true],
      [`sh-${SUFFIX}-sh-1`, true],
    ]);
    expect(containers[0]?.body).toEqual(
      JSON.parse(JSON.stringify(engineCreateBody(info.request.containers[0] as never))),
    );
    expect(containers[0]?.body).toMatchObject({
      Env: ['LOGLEVEL=WARNING', `TORCHX_RANK0_HOST=sh-${SUFFIX}-sh-0`],
      HostConfig: {
        NetworkMode: 'torchx',
        Memory: 1024 ** 3,
        ShmSize: 1024 ** 3,
        NanoCpus: 1e9,
        Privileged: false,
      },
    });
  });

  it('stops the containers it started when a later one cannot be created, and reports the failure', async () => {
    failCreateAfter = 1;
    const s = scheduler();
    await expect(s.schedule(s.submitDryrun(appOf({ title: 'utils.sh' }), {}))).rejects.toThrow(
      /No such image/,
    );
    expect(containers.map((c) => c.stopped)).toEqual([true]);
  });

  it('describes per replica and the app as TorchX: live while any runs, FAILED when one failed', async () => {
    const s = scheduler();
    const appId = await s.schedule(s.submitDryrun(appOf({ title: 'utils.sh' }), {}));
    expect((await s.describe(appId))?.state).toBe('RUNNING');
    Object.assign(containers[0] as FakeContainer, { status: 'exited', exitCode: 0 });
    Object.assign(containers[1] as FakeContainer, { status: 'exited', exitCode: 3 });
    const desc = await s.describe(appId);
    expect(desc?.state).toBe('FAILED');
    expect(desc?.rolesStatuses[0]?.replicas.map((r) => [r.id, r.state, r.exitCode, r.hostname])).toEqual([
      [0, 'SUCCEEDED', 0, `sh-${SUFFIX}-sh-0`],
      [1, 'FAILED', 3, `sh-${SUFFIX}-sh-1`],
    ]);
    await expect(s.describe('unknown-app')).resolves.toBeUndefined();
    await expect(s.list()).resolves.toEqual([
      { appId, state: 'FAILED', appHandle: '<NOT_SET>', name: appId },
    ]);
  });

  it('cancels by stopping every container of the app', async () => {
    const s = scheduler();
    const appId = await s.schedule(s.submitDryrun(appOf({ title: 'utils.sh' }), {}));
    await s.cancel(appId);
    expect(containers.map((c) => c.stopped)).toEqual([true, true]);
  });

  it("reads a replica's stdout, stderr or both from the multiplexed log stream", async () => {
    const s = scheduler();
    const appId = await s.schedule(s.submitDryrun(appOf({ title: 'utils.sh' }), {}));
    await expect(s.readLogs(appId, { role: 'sh', replica: 1 })).resolves.toEqual({
      lines: ['out line', 'err line'],
      caughtUp: true,
    });
    await expect(s.readLogs(appId, { role: 'sh', streams: 'stderr' })).resolves.toMatchObject({
      lines: ['err line'],
    });
    await expect(s.readLogs(appId, { role: 'sh', replica: 5 })).rejects.toMatchObject({
      code: 'UnknownReplica',
    });
  });
});

describe('Docker helpers', () => {
  it('converts docker-py sizes to bytes and rejects what Docker would not parse', () => {
    expect(dockerBytes('512m')).toBe(512 * 1024 ** 2);
    expect(dockerBytes('2g')).toBe(2 * 1024 ** 3);
    expect(() => dockerBytes('lots')).toThrow(/not a Docker size/);
  });

  it('passes a TTY (unframed) log through and splits framed ones', () => {
    expect(demuxDockerLog(Buffer.from('plain\n'))).toBe('plain\n');
    expect(demuxDockerLog(Buffer.concat([frame(1, 'a'), frame(2, 'b')]))).toBe('ab');
  });
});
