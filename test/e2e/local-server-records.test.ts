/**
 * The local server's records over real HTTP: status answers from the record cache stay right while a real
 * local_cwd job moves through its states under concurrent polling, and the embedded dynalite listens on no
 * port (so nothing but the server can change the records the cache holds).
 */
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalServer } from '../../lib/local/server.js';
import { isTerminal, stateRank } from '../../lib/specs/index.js';

let server: LocalServer;
let dataDir: string;
let listeningBefore: number[];

/** Ports this process listens on over TCP (its socket inodes, matched in /proc/net/tcp{,6}). */
function listeningPorts(): number[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
      if (inode) inodes.add(inode);
    } catch {
      // The fd closed meanwhile.
    }
  }
  const ports: number[] = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const lines = readFileSync(table, 'utf8').split('\n').slice(1);
    for (const line of lines) {
      const fields = line.trim().split(/\s+/);
      // sl local_address rem_address st ... inode (field 9); st 0A is LISTEN.
      if (fields[3] === '0A' && inodes.has(fields[9] ?? '')) {
        ports.push(Number.parseInt((fields[1] ?? '').split(':')[1] ?? '', 16));
      }
    }
  }
  return ports.sort((a, b) => a - b);
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'txs-e2e-records-'));
  listeningBefore = listeningPorts();
  const { startLocalServer } = await import('../../lib/local/server.js');
  server = await startLocalServer({ port: 0, dataDir, reconcileEveryMs: 0 });
});
afterAll(async () => {
  await server?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const headers = { 'x-txs-user': 'e2e', 'content-type': 'application/json' };

async function call(method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${text}`);
  return JSON.parse(text) as Record<string, unknown>;
}

const stateOf = (detail: Record<string, unknown>) => (detail.status as { state: string }).state;

describe('local server records', () => {
  it('listens on its API port only: the embedded DynamoDB has no socket', () => {
    const opened = listeningPorts().filter((port) => !listeningBefore.includes(port));
    expect(opened).toEqual([server.port]);
  });

  it('answers status with every state a job passes through, in order, to 20 clients polling it', async () => {
    const run = await call('POST', '/v1/apps', {
      scheduler: 'local_cwd',
      component: 'utils.sh',
      args: ['sleep', '60'],
    });
    const path = `/v1/apps/local_cwd/${encodeURIComponent(String(run.appId))}`;
    // Written, then read: the first status already shows what the run answered (or later).
    const first = await call('GET', path);
    expect(stateRank(stateOf(first) as never)).toBeGreaterThanOrEqual(stateRank(run.state as never));

    let done = false;
    const seen: string[][] = Array.from({ length: 20 }, () => []);
    const pollers = seen.map(async (states) => {
      while (!done) {
        const state = stateOf(await call('GET', path));
        if (states[states.length - 1] !== state) states.push(state);
        if (isTerminal(state as never)) return;
      }
    });
    for (let i = 0; i < 200 && !seen.some((s) => s.includes('RUNNING')); i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await call('POST', `${path}/cancel`);
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline && !seen.every((s) => s.includes('CANCELLED'))) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    done = true;
    await Promise.all(pollers);

    for (const states of seen) {
      // Never backwards, and every poller saw the end.
      const ranks = states.map((state) => stateRank(state as never));
      expect(ranks).toEqual([...ranks].sort((a, b) => a - b));
      expect(states[states.length - 1]).toBe('CANCELLED');
    }
    // The cache answers what the table holds: status and list (a Query, never cached) agree.
    const detail = await call('GET', path);
    const list = await call('GET', '/v1/apps?limit=100');
    const listed = (list.apps as Array<{ handle: string; state: string }>).find(
      (a) => a.handle === detail.handle,
    );
    expect(listed?.state).toBe('CANCELLED');
    expect(stateOf(detail)).toBe('CANCELLED');
    expect((detail.history as Array<{ to: string }>).map((h) => h.to)).toContain('CANCELLED');
  });
});
