/**
 * Local mode is the user's own machine: host access stays allowed (privileged, bind mounts, devices), and
 * the X-Txs-User name is the owner as given.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENV } from '../../functions/shared/env-names.js';
import type { LocalServer } from '../../lib/local/server.js';

let server: LocalServer;
let dataDir: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'txs-e2e-host-'));
  const { startLocalServer } = await import('../../lib/local/server.js');
  server = await startLocalServer({ port: 0, dataDir, inMemory: true, reconcileEveryMs: 0 });
});
afterAll(async () => {
  await server?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('local mode host access', () => {
  it('dry-runs a privileged Batch job with a bind mount of / and a device, as before', async () => {
    const response = await fetch(`${server.url}/v1/dryrun`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-txs-user': 'alice' },
      body: JSON.stringify({
        scheduler: 'aws_batch',
        cfg: { queue: 'gpu', privileged: true },
        app: {
          name: 'host',
          roles: [
            {
              name: 'r',
              image: 'alpine',
              entrypoint: 'sh',
              resource: 'cpu.small',
              mounts: [
                { type: 'bind', srcPath: '/', dstPath: '/host' },
                { type: 'device', srcPath: '/dev/fuse' },
              ],
            },
          ],
        },
      }),
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as {
      request: { registerJobDefinition: { tags: Record<string, string> } };
    };
    // No stack outside AWS: the request carries TorchX's tags only.
    expect(body.request.registerJobDefinition.tags).not.toHaveProperty('torchx-serverless:stack');
  });

  it('is configured by the server passing its settings to the functions, not through the environment', () => {
    for (const name of [
      ENV.tableName,
      ENV.dynamoDbEndpoint,
      ENV.schedulers,
      ENV.localDataDir,
      ENV.allowPrivileged,
      ENV.allowedHostPaths,
      ENV.allowedDevices,
    ]) {
      expect(process.env[name], name).toBeUndefined();
    }
  });
});
