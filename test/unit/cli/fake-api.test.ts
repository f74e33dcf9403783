import { describe, expect, it } from 'vitest';
import type { AppState } from '../../../lib/specs/index.js';
import { startFakeApi } from './fake-api.js';

describe("the CLI tests' fake API", () => {
  it('refuses to send an answer the real API cannot give, and fails the test on close', async () => {
    const api = await startFakeApi();
    api.addApp('local_cwd://torchx/odd-k3x9', { states: ['SLEEPING' as AppState] });
    const answer = await fetch(`${api.url}/v1/apps/local_cwd/odd-k3x9`);
    expect(answer.status).toBe(500);
    expect(((await answer.json()) as { error: { code: string } }).error.code).toBe('FakeApiBrokeContract');
    await expect(api.close()).rejects.toThrow(/\/status\/state must be equal to one of the allowed values/);
  });

  it('closes quietly when every answer matched the contract', async () => {
    const api = await startFakeApi();
    api.addApp('local_cwd://torchx/echo-k3x9', { states: ['RUNNING'] });
    expect((await fetch(`${api.url}/v1/apps/local_cwd/echo-k3x9`)).status).toBe(200);
    await expect(api.close()).resolves.toBeUndefined();
  });
});
