/**
 * `waitForApp`'s requests: long polls sent back to back where the server holds them (`Long-Polled: true`),
 * paced with a backoff where it answers at once (the deployed API) or sends no revision (an older server).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type AppResponse, TxsClient, waitForApp } from '../../../lib/cli/index.js';
import { appResponse, type StubReply, type StubServer, startStubServer } from './helpers.js';

let stub: StubServer | undefined;
afterEach(async () => {
  await stub?.close();
  stub = undefined;
});

function appAt(state: AppResponse['status']['state'], revision?: string): AppResponse {
  return appResponse(state, revision === undefined ? {} : { revision });
}

/** A server whose app is RUNNING for `runningAnswers` status answers, then SUCCEEDED. */
async function serve(options: { runningAnswers: number; longPolls: boolean; revisions: boolean }) {
  let answers = 0;
  stub = await startStubServer((): StubReply => {
    answers += 1;
    const done = answers > options.runningAnswers;
    const revision = options.revisions ? `${done ? 'B' : 'A'}`.repeat(22) : undefined;
    return {
      body: appAt(done ? 'SUCCEEDED' : 'RUNNING', revision),
      headers: options.longPolls ? { 'long-polled': 'true' } : ({} as Record<string, string>),
    };
  });
  return new TxsClient({ endpoint: stub.url });
}

async function follow(client: TxsClient) {
  const sleeps: number[] = [];
  let clock = 0;
  const final = await waitForApp({
    client,
    handle: 'local_cwd://torchx/echo-1',
    now: () => clock,
    sleep: async (ms) => {
      sleeps.push(ms);
      clock += ms;
    },
  });
  return { final, sleeps, requests: stub?.requests ?? [] };
}

describe('waitForApp', () => {
  it('sends each long poll with the revision it has seen and never sleeps when the server holds them', async () => {
    const { final, sleeps, requests } = await follow(
      await serve({ runningAnswers: 3, longPolls: true, revisions: true }),
    );
    expect(final.status.state).toBe('SUCCEEDED');
    expect(sleeps).toEqual([]);
    expect(requests.slice(1).map((r) => r.query.get('waitFor'))).toEqual([
      'A'.repeat(22),
      'A'.repeat(22),
      'A'.repeat(22),
    ]);
  });

  it('paces its requests with the backoff when the server answers at once (the deployed API)', async () => {
    const { final, sleeps, requests } = await follow(
      await serve({ runningAnswers: 4, longPolls: false, revisions: true }),
    );
    expect(final.status.state).toBe('SUCCEEDED');
    expect(sleeps).toEqual([1_000, 1_000, 1_000]);
    expect(requests.slice(1).every((r) => r.query.get('waitFor') === 'A'.repeat(22))).toBe(true);
  });

  it('polls without waitFor, paced from the first request, when the server sends no revision', async () => {
    const { final, sleeps, requests } = await follow(
      await serve({ runningAnswers: 2, longPolls: false, revisions: false }),
    );
    expect(final.status.state).toBe('SUCCEEDED');
    expect(sleeps).toEqual([1_000, 1_000]);
    expect(requests.every((r) => !r.query.has('waitFor'))).toBe(true);
  });
});

describe('waitForApp, stopped', () => {
  it('ends a held request at once when its signal aborts (Ctrl-C), instead of waiting for the answer', async () => {
    let held = 0;
    stub = await startStubServer(async (request): Promise<StubReply> => {
      if (!request.query.has('waitFor')) return { body: appAt('RUNNING', 'A'.repeat(22)) };
      held += 1;
      return new Promise<StubReply>(() => undefined); // a long poll that never answers
    });
    const client = new TxsClient({ endpoint: stub.url, maxRetries: 0 });
    const controller = new AbortController();
    const waiting = waitForApp({
      client,
      handle: 'local_cwd://torchx/echo-1',
      now: () => 0,
      sleep: async () => undefined,
      signal: controller.signal,
    });
    while (held === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort();
    await expect(waiting).rejects.toThrow();
    expect(held).toBe(1);
  });
});
