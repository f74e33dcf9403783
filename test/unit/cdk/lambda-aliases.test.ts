/**
 * What the Lambda bundles' SDK aliases (cdk/constructs/lambda-bundling.ts) change, checked on a bundle built
 * with the stack's bundling definition and run against a loopback endpoint: the Logs client works for every
 * call the functions make without the SDK's event-stream codec, and a streaming call fails with a clear error.
 */
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lambdaBuildOptions } from '../../../cdk/constructs/lambda-bundling.js';

type Fixture = typeof import('../../fixtures/lambda-bundling/logs-client.js');

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const BUILD_TIMEOUT_MS = 60_000;

let outdir: string;
let bundled: Fixture;
let server: Server;
let endpoint: string;
const targets: string[] = [];

beforeAll(async () => {
  outdir = mkdtempSync(path.join(tmpdir(), 'txs-aliases-'));
  await build(lambdaBuildOptions(ROOT, 'test/fixtures/lambda-bundling/logs-client.ts', outdir));
  bundled = (await import(pathToFileURL(path.join(outdir, 'index.mjs')).href)) as Fixture;
  server = createServer((req, res) => {
    const target = String(req.headers['x-amz-target']);
    targets.push(target);
    req.resume();
    req.on('end', () => {
      if (target.endsWith('.StartLiveTail')) {
        res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream' });
        res.end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/x-amz-json-1.1', 'x-amzn-requestid': 'r1' });
      res.end(JSON.stringify({ events: [{ timestamp: 1, message: 'hello', ingestionTime: 2 }] }));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, BUILD_TIMEOUT_MS);

afterAll(async () => {
  server?.close();
  if (outdir !== undefined) rmSync(outdir, { recursive: true, force: true });
});

describe('Lambda bundles without the SDK event-stream codec (@smithy/core/event-streams aliased)', () => {
  it('builds the Logs client and reads log events as the scheduler functions do', async () => {
    const client = bundled.logsClient(endpoint);
    const output = await client.send(
      new bundled.GetLogEventsCommand({ logGroupName: '/aws/batch/job', logStreamName: 's' }),
    );
    expect(output.events).toEqual([{ timestamp: 1, message: 'hello', ingestionTime: 2 }]);
    expect(targets).toContain('Logs_20140328.GetLogEvents');
  });

  it('fails a streaming call with an error that names the missing codec', async () => {
    const client = bundled.logsClient(endpoint);
    await expect(
      client.send(new bundled.StartLiveTailCommand({ logGroupIdentifiers: ['/aws/batch/job'] })),
    ).rejects.toMatchObject({ name: 'EventStreamsNotBundledError' });
  });
});
