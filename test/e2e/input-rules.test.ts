/**
 * The input probes of issue 17 over real HTTP against the local server: raw request targets (no client-side
 * dot-segment resolution), the `%2F` and `..%2F` app id spellings, and the catastrophic log regex.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalServer } from '../../lib/local/server.js';

let server: LocalServer;
let dataDir: string;
let appId: string;

/** Sends `path` byte for byte (fetch and URL would resolve `..` before sending). */
function rawGet(path: string): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port: server.port, path, method: 'GET', headers: { 'x-txs-user': 'probe' } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
          }),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}

function pathOf(body: Record<string, unknown>): string | undefined {
  return (body.error as { details?: { path: string }[] } | undefined)?.details?.[0]?.path;
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'txs-e2e-input-'));
  const { startLocalServer } = await import('../../lib/local/server.js');
  server = await startLocalServer({ port: 0, dataDir, inMemory: true, reconcileEveryMs: 0 });
  // Ten short lines: five all-a lines (matching ^(a+)+$) and five ending in "!" (the backtracking case).
  const script =
    'for i in 1 2 3 4 5; do echo aaaaaaaaaaaaaaaaaaaaaaaaaaaaa; echo aaaaaaaaaaaaaaaaaaaaaaaaaaaaa!; done';
  const response = await fetch(`${server.url}/v1/apps`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-txs-user': 'probe' },
    body: JSON.stringify({ scheduler: 'local_cwd', component: 'utils.sh', args: ['sh', '-c', script] }),
  });
  expect(response.status).toBe(201);
  appId = String(((await response.json()) as { appId: string }).appId);
  for (let i = 0; i < 200; i++) {
    const status = await rawGet(`/v1/apps/local_cwd/${appId}`);
    if ((status.body.status as { state: string }).state === 'SUCCEEDED') return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('the probe app never succeeded');
});
afterAll(async () => {
  await server?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('local server: one spelling per app', () => {
  it('reaches the app by its id', async () => {
    expect((await rawGet(`/v1/apps/local_cwd/${appId}`)).status).toBe(200);
  });

  it.each([
    ['x%2F<appId>', (id: string) => `/v1/apps/local_cwd/x%2F${id}`, 'appId'],
    ['..%2F<appId>', (id: string) => `/v1/apps/local_cwd/..%2F${id}`, 'appId'],
    ['x%2F<appId>/logs', (id: string) => `/v1/apps/local_cwd/x%2F${id}/logs`, 'appId'],
    ['a 5,000-character id', () => `/v1/apps/local_cwd/${'a'.repeat(5_000)}`, 'appId'],
    ['x/../<appId> (a literal parent segment)', (id: string) => `/v1/apps/local_cwd/x/../${id}`, 'path'],
    ['%2e%2e (an encoded parent segment)', (id: string) => `/v1/apps/local_cwd/x/%2e%2e/${id}`, 'path'],
    ['./<appId> (a literal current segment)', (id: string) => `/v1/apps/local_cwd/./${id}`, 'path'],
  ])('refuses %s with a 400 naming the field instead of reaching the app', async (_what, target, field) => {
    const reply = await rawGet(target(appId));
    expect(reply.status).toBe(400);
    expect(pathOf(reply.body)).toBe(field);
    expect(JSON.stringify(reply.body)).not.toMatch(/DynamoDB|txs-apps/);
  });
});

describe('local server: bounded log filtering', () => {
  it('runs ^(a+)+$ over the ten probe lines and returns the five all-a lines', async () => {
    const reply = await rawGet(`/v1/apps/local_cwd/${appId}/logs?regex=${encodeURIComponent('^(a+)+$')}`);
    expect(reply.status).toBe(200);
    expect(reply.body.lines).toEqual(Array.from({ length: 5 }, () => 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaa'));
  });

  it('refuses a lookahead with a 400 naming regex', async () => {
    const reply = await rawGet(`/v1/apps/local_cwd/${appId}/logs?regex=${encodeURIComponent('a(?=!)')}`);
    expect(reply.status).toBe(400);
    expect(pathOf(reply.body)).toBe('regex');
  });
});
