/**
 * Test helpers for the slurm scheduler: a fake `fetch` that answers from canned slurmrestd responses (bodies
 * recorded from slurmrestd 22.05's OpenAPI v0.0.38, in test/fixtures/slurm/responses/) and records requests.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  type FetchLike,
  SlurmRestClient,
  SlurmScheduler,
  type SlurmSchedulerOptions,
} from '../../../lib/schedulers/slurm/index.js';

/** The fixed app-id suffix of tests. */
export const SUFFIX = 't4rcs9x6sv1m';

/** A recorded slurmrestd response body. */
export function response(name: string): unknown {
  return JSON.parse(
    readFileSync(join(import.meta.dirname, '../../fixtures/slurm/responses', `${name}.json`), 'utf8'),
  );
}

/** One canned answer of the fake wire. */
export interface WireAnswer {
  status: number;
  body: unknown;
}

/** A request the fake wire saw. */
export interface WireRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: unknown;
}

/** A `fetch` answering from `answers` in order (or by a function), recording every request. */
export function fakeFetch(answers: WireAnswer[] | ((req: WireRequest) => WireAnswer)) {
  const requests: WireRequest[] = [];
  const fetch: FetchLike = async (url, init) => {
    const req: WireRequest = {
      method: init.method ?? 'GET',
      url,
      headers: init.headers as Record<string, string>,
      body: typeof init.body === 'string' ? JSON.parse(init.body) : undefined,
    };
    requests.push(req);
    const next = typeof answers === 'function' ? answers(req) : answers.shift();
    if (next === undefined) throw new Error(`unexpected request ${req.method} ${url}`);
    const text = typeof next.body === 'string' ? next.body : JSON.stringify(next.body);
    return new Response(text, { status: next.status, headers: { 'content-type': 'application/json' } });
  };
  return { fetch, requests };
}

/** A scheduler with a fixed app-id suffix and, when `answers` are given, a client on the fake wire. */
export function slurmScheduler(
  options: SlurmSchedulerOptions & { answers?: WireAnswer[] | ((req: WireRequest) => WireAnswer) } = {},
) {
  const wire = fakeFetch(options.answers ?? []);
  const client = new SlurmRestClient({
    url: 'http://slurm.test:6820',
    user: 'alice',
    auth: { token: 'token-1' },
    fetch: wire.fetch,
  });
  const scheduler = new SlurmScheduler(
    { sessionName: 'torchx', sleep: async () => {} },
    { client, workDir: '/shared/torchx', uniqueNamer: (p) => `${p}-${SUFFIX}`, ...options },
  );
  return { scheduler, client, requests: wire.requests };
}
