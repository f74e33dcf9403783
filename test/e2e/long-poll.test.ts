/**
 * End to end: waiting is a long poll against the real local server (local_cwd jobs as real processes). A
 * status request with `waitFor=<revision>` is held until the record changes; `txs run --wait` follows an app
 * with such requests and never paces itself with a sleep while the server holds them.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HttpTransport } from '../../lib/cli/http-transport.js';
import { ExitCode } from '../../lib/cli/index.js';
import type { LocalServer } from '../../lib/local/server.js';
import { validateResponses } from '../helpers/openapi-validator.js';
import { runTxs } from '../helpers/real-time-cli.js';

let server: LocalServer;
let dataDir: string;

const { transport: validating } = validateResponses(() => server?.url);

beforeAll(async () => {
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
  dataDir = await mkdtemp(join(tmpdir(), 'txs-long-poll-'));
  const { startLocalServer } = await import('../../lib/local/server.js');
  server = await startLocalServer({ port: 0, dataDir, inMemory: true, reconcileEveryMs: 0 });
});

afterAll(async () => {
  await server?.close();
  await rm(dataDir, { recursive: true, force: true });
});

/** One status exchange as the CLI made it. */
interface StatusExchange {
  waitFor: string | null;
  state: string;
  revision: string | undefined;
  longPolled: string | undefined;
}

/** Runs txs in-process; records its status exchanges and every sleep it asked for. */
async function txs(
  args: string[],
  onRequest: (url: URL) => void = () => undefined,
): Promise<{ code: number; out: string; err: string; statuses: StatusExchange[]; sleeps: number[] }> {
  const statuses: StatusExchange[] = [];
  const sleeps: number[] = [];
  const transport: HttpTransport = async (exchange) => {
    onRequest(exchange.url);
    const answer = await validating(exchange);
    if (exchange.method === 'GET' && /^\/v1\/apps\/[^/]+\/[^/]+$/.test(exchange.url.pathname)) {
      const body = JSON.parse(answer.text) as { status: { state: string }; revision?: string };
      statuses.push({
        waitFor: exchange.url.searchParams.get('waitFor'),
        state: body.status.state,
        revision: body.revision,
        longPolled: answer.header('long-polled'),
      });
    }
    return answer;
  };
  const { code, out, err } = await runTxs(args, {
    env: { TXS_ENDPOINT: server.url, TXS_USER: 'long-poll-e2e' },
    cwd: dataDir,
    homeDir: dataDir,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    transport,
  });
  return { code, out, err, statuses, sleeps };
}

describe('txs run --wait against the local server', () => {
  it('returns once utils.echo has ended, without pacing its status requests', async () => {
    const run = await txs(['run', '--wait', 'utils.echo', '--msg', 'hi']);
    expect(run.code).toBe(ExitCode.OK);
    expect(run.err).toMatch(/SUCCEEDED/);
    expect(run.statuses.at(-1)?.state).toBe('SUCCEEDED');
    // The server holds the requests: no status poll waited on a timer.
    expect(run.sleeps).toEqual([]);
  });

  it('is answered by a held status request as soon as the job ends, with the new revision', async () => {
    const gate = join(dataDir, 'go');
    let opened = false;
    // The job runs until the test creates `gate`, which it does once txs has sent a waiting request.
    const run = await txs(
      ['run', '--wait', 'utils.sh', 'sh', '-c', `while [ ! -e '${gate}' ]; do sleep 0.02; done`],
      (url) => {
        if (!opened && url.searchParams.has('waitFor')) {
          opened = true;
          void writeFile(gate, '');
        }
      },
    );
    expect(existsSync(gate)).toBe(true);
    expect(run.code).toBe(ExitCode.OK);
    const held = run.statuses.filter((s) => s.waitFor !== null);
    expect(held.length).toBeGreaterThan(0);
    for (const exchange of held) {
      expect(exchange.longPolled).toBe('true');
      // Each held request answered a record other than the one it had seen (no answer at a timeout).
      expect(exchange.revision).not.toBe(exchange.waitFor);
    }
    expect(held.at(-1)?.state).toBe('SUCCEEDED');
    expect(run.sleeps).toEqual([]);
  });
});

describe('GET /v1/apps/{scheduler}/{appId}?waitFor=', () => {
  async function status(
    path: string,
  ): Promise<{ status: number; body: Record<string, unknown>; longPolled: string | null }> {
    const response = await fetch(`${server.url}${path}`, {
      headers: { authorization: `Bearer ${server.token}`, 'x-txs-user': 'long-poll-e2e' },
    });
    return {
      status: response.status,
      body: (await response.json()) as Record<string, unknown>,
      longPolled: response.headers.get('long-polled'),
    };
  }

  async function sleeper(): Promise<{ path: string; handle: string }> {
    const run = await txs(['run', 'utils.sh', 'sleep', '60']);
    const handle = run.out.trim();
    const appId = handle.slice(handle.lastIndexOf('/') + 1);
    return { path: `/v1/apps/local_cwd/${encodeURIComponent(appId)}`, handle };
  }

  it('answers the unchanged record after waitSeconds, and the changed one once a cancel commits', async () => {
    const { path, handle } = await sleeper();
    let first = await status(path);
    while (first.body.status && (first.body.status as { state: string }).state !== 'RUNNING') {
      first = await status(`${path}?waitFor=${first.body.revision}&waitSeconds=5`);
    }
    const seen = first.body.revision as string;
    const unchanged = await status(`${path}?waitFor=${seen}&waitSeconds=1`);
    expect(unchanged.status).toBe(200);
    expect(unchanged.longPolled).toBe('true');
    expect(unchanged.body.revision).toBe(seen);

    const held = status(`${path}?waitFor=${seen}&waitSeconds=20`);
    expect((await txs(['cancel', handle])).code).toBe(ExitCode.OK);
    const changed = await held;
    expect(changed.longPolled).toBe('true');
    expect(changed.body.revision).not.toBe(seen);
    const state = (changed.body.status as { state: string }).state;
    expect(changed.body.cancelRequestedAt !== undefined || state === 'CANCELLED').toBe(true);
  });

  it('answers a terminal record at once, however long the caller would wait', async () => {
    const run = await txs(['run', '--wait', 'utils.echo', '--msg', 'done']);
    const handle = run.out.trim();
    const path = `/v1/apps/local_cwd/${encodeURIComponent(handle.slice(handle.lastIndexOf('/') + 1))}`;
    const done = await status(path);
    const again = await status(`${path}?waitFor=${done.body.revision}&waitSeconds=20`);
    expect((again.body.status as { state: string }).state).toBe('SUCCEEDED');
    expect(again.body.revision).toBe(done.body.revision);
  });

  it.each([
    ['waitFor=abc', 'waitFor'],
    ['waitFor=AAAAAAAAAAAAAAAAAAAAAA&waitSeconds=21', 'waitSeconds'],
    ['waitSeconds=5', 'waitSeconds'],
    ['waitFor=AAAAAAAAAAAAAAAAAAAAAA&refresh=true', 'waitFor'],
  ])('refuses ?%s with a 400 naming %s, before reading the record', async (query, field) => {
    const answer = await status(`/v1/apps/local_cwd/echo-nosuchapp?${query}`);
    expect(answer.status).toBe(400);
    const error = answer.body.error as { details: { path: string }[] };
    expect(error.details[0]?.path).toBe(field);
  });
});
