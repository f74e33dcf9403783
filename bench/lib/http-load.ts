/**
 * A closed-loop HTTP load generator for the latency benchmark: `clients` loops, each sending its next request
 * as soon as its previous one is answered, over `node:http` (lighter than `fetch`, so the client leaves the
 * shared cores to the server). With keep-alive each client holds one connection for the whole run (as `txs`,
 * browsers and HTTP client libraries do); without it every request opens a new connection and the server
 * closes it after answering (as `curl` does).
 */
import { Agent, request } from 'node:http';
import { msSince } from './stats.js';

/** One request to send. */
export interface LoadRequest {
  method: 'GET' | 'POST';
  /** Path and query. */
  path: string;
  headers: Record<string, string>;
  body?: string;
}

/** How the clients connect. */
export type Connections = 'keep-alive' | 'new per request';

/** What one closed-loop run measured. */
export interface LoadRun {
  /** Round trip of every request (ms), in completion order. */
  latenciesMs: number[];
  /** Wall time of the whole run (ms). */
  elapsedMs: number;
  /** CPU time this process (the clients) spent (ms). */
  clientCpuMs: number;
  /** Measured requests answered with another status than 200 (their round trips are in `latenciesMs` too). */
  errors: number;
}

/** Sends one request; resolves with the status code once the whole response is read. */
function send(origin: URL, agent: Agent | false, one: LoadRequest): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: origin.hostname,
        port: origin.port,
        method: one.method,
        path: one.path,
        agent,
        headers:
          one.body === undefined
            ? one.headers
            : { ...one.headers, 'content-length': Buffer.byteLength(one.body) },
      },
      (res) => {
        res.resume();
        res.once('end', () => resolve(res.statusCode ?? 0));
        res.once('error', reject);
      },
    );
    req.once('error', reject);
    req.end(one.body);
  });
}

/**
 * Runs `clients` closed loops until `requests` requests were answered; `warmUpPerClient` requests per client
 * go first, unmeasured (with keep-alive they open and admit every connection the run uses).
 *
 * @throws when a warm-up response is not 200 (measured ones are counted in `errors`).
 */
export async function closedLoop(options: {
  origin: URL;
  clients: number;
  requests: number;
  warmUpPerClient: number;
  connections: Connections;
  next: (i: number) => LoadRequest;
}): Promise<LoadRun> {
  const { origin, clients, requests, next } = options;
  const agent =
    options.connections === 'keep-alive' ? new Agent({ keepAlive: true, maxSockets: clients }) : false;
  const check = (status: number, what: LoadRequest) => {
    if (status !== 200) throw new Error(`${what.method} ${what.path} answered ${status}`);
  };
  try {
    await Promise.all(
      Array.from({ length: clients }, async (_, c) => {
        for (let i = 0; i < options.warmUpPerClient; i++) {
          const one = next(c * options.warmUpPerClient + i);
          check(await send(origin, agent, one), one);
        }
      }),
    );
    const latenciesMs: number[] = [];
    let issued = 0;
    let errors = 0;
    const cpu = process.cpuUsage();
    const start = process.hrtime.bigint();
    await Promise.all(
      Array.from({ length: clients }, async () => {
        while (issued < requests) {
          const one = next(issued++);
          const t = process.hrtime.bigint();
          if ((await send(origin, agent, one)) !== 200) errors++;
          latenciesMs.push(msSince(t));
        }
      }),
    );
    const elapsedMs = msSince(start);
    const used = process.cpuUsage(cpu);
    return { latenciesMs, elapsedMs, clientCpuMs: (used.user + used.system) / 1000, errors };
  } finally {
    if (agent) agent.destroy();
  }
}
