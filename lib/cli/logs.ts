/**
 * Reading and following the logs of one or more replicas over `GET …/logs`.
 *
 * @module
 */
import type { AppDef } from '../specs/app-def.js';
import { type AppState, isTerminal } from '../specs/app-state.js';
import { displayText } from '../specs/names.js';
import type { LogStreams } from './api-types.js';
import type { TxsClient } from './client.js';
import { UsageError } from './errors.js';
import type { Painter } from './format.js';
import { logLineForTerminal } from './terminal-text.js';
import type { TerminalWatch } from './wait.js';

/** One replica of one role. */
export interface ReplicaRef {
  role: string;
  replica: number;
}

/** Lines per page requested from the API. */
export const LOG_PAGE_LIMIT = 1_000;

/**
 * The replicas to read: every replica of `role` (or of every role when `role` is undefined), or exactly
 * `replicas` of `role` when given (TorchX `find_role_replicas`).
 *
 * @throws UsageError naming the app's roles when `role` is not one of them.
 * @example
 * ```ts
 * selectReplicas(app, 'trainer'); // [{ role: 'trainer', replica: 0 }, { role: 'trainer', replica: 1 }]
 * ```
 */
export function selectReplicas(app: AppDef, role?: string, replicas?: readonly number[]): ReplicaRef[] {
  if (role !== undefined && replicas !== undefined) return replicas.map((replica) => ({ role, replica }));
  const roles = role === undefined ? app.roles : app.roles.filter((r) => r.name === role);
  if (role !== undefined && roles.length === 0) {
    throw new UsageError(
      `no role ${role} in app ${app.name}`,
      `its roles are: ${app.roles.map((r) => r.name).join(', ') || '<none>'}`,
    );
  }
  return roles.flatMap((r) =>
    Array.from({ length: r.numReplicas }, (_, replica) => ({ role: r.name, replica })),
  );
}

/** Options of {@link followLogs}. */
export interface FollowLogsOptions {
  client: TxsClient;
  handle: string;
  replicas: readonly ReplicaRef[];
  /** Keep polling until the app is terminal (`-t`). */
  follow: boolean;
  regex?: string;
  since?: string;
  until?: string;
  streams?: LogStreams;
  /** Receives each page's lines of one replica (never empty). */
  onLines: (ref: ReplicaRef, lines: readonly string[]) => void;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  now: () => number;
  signal?: AbortSignal;
  /** Set when the app is seen terminal; followers then drain and stop. */
  terminalWatch: TerminalWatch;
}

/**
 * Reads the logs of every replica concurrently and writes whole lines as they arrive. Without `follow`,
 * each replica's log is read up to what exists now. With `follow`, each keeps polling (1 s, backing off to
 * 5 s while idle) until the API says the log is complete (no `nextToken`) or, as a fallback, two polls
 * after the app was seen terminal found nothing new.
 *
 * @throws the first follower's error, after stopping the others.
 */
export async function followLogs(options: FollowLogsOptions): Promise<void> {
  const controller = new AbortController();
  const onAbort = () => controller.abort(options.signal?.reason);
  options.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    await Promise.all(
      options.replicas.map((ref) =>
        followReplica(options, ref, controller.signal).catch((error: unknown) => {
          controller.abort(error);
          throw error;
        }),
      ),
    );
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
  }
}

async function followReplica(
  options: FollowLogsOptions,
  ref: ReplicaRef,
  signal: AbortSignal,
): Promise<void> {
  const { client, handle } = options;
  let nextToken: string | undefined;
  let idlePolls = 0;
  let emptyPollsAfterTerminal = 0;
  for (;;) {
    signal.throwIfAborted();
    const startedAt = options.now();
    const page = await client.logs(handle, {
      role: ref.role,
      replica: ref.replica,
      ...(options.regex === undefined ? {} : { regex: options.regex }),
      ...(options.since === undefined ? {} : { since: options.since }),
      ...(options.until === undefined ? {} : { until: options.until }),
      ...(options.streams === undefined ? {} : { streams: options.streams }),
      limit: LOG_PAGE_LIMIT,
      ...(nextToken === undefined ? {} : { nextToken }),
    });
    signal.throwIfAborted();
    if (page.lines.length > 0) options.onLines(ref, page.lines);
    if (page.nextToken === undefined) return;
    nextToken = page.nextToken;
    // A page can be empty and still not caught up: `--regex` filters server-side, so a page of 1,000
    // non-matching lines arrives empty. Only `caughtUp` (or, from an older API, an empty page) ends a read.
    const caughtUp = page.caughtUp ?? page.lines.length === 0;
    if (!caughtUp) {
      idlePolls = 0;
      continue;
    }
    if (!options.follow) return;
    const terminalAt = options.terminalWatch.terminalAt;
    if (terminalAt !== undefined && startedAt >= terminalAt) {
      emptyPollsAfterTerminal += 1;
      if (emptyPollsAfterTerminal >= 2) return;
    }
    if (page.lines.length > 0) idlePolls = 0;
    await options.sleep(Math.min(5_000, Math.round(1_000 * 1.5 ** idlePolls)), signal);
    idlePolls += 1;
  }
}

/**
 * Writes log lines as text: bare, or each prefixed with `role/replica` (green on a terminal) as
 * `torchx log` does when reading several replicas. With `terminal`, each line is shown as
 * {@link logLineForTerminal} says (the job's control codes resolved or escaped, never obeyed).
 *
 * @example
 * ```ts
 * const onLines = textLineWriter((t) => process.stdout.write(t), painter(false), true);
 * onLines({ role: 'trainer', replica: 1 }, ['loss=0.3']); // writes 'trainer/1 loss=0.3\n'
 * ```
 */
export function textLineWriter(
  write: (text: string) => void,
  paint: Painter,
  prefix: boolean,
  terminal = false,
): (ref: ReplicaRef, lines: readonly string[]) => void {
  const shown = terminal ? logLineForTerminal : (line: string) => line;
  return (ref, lines) => {
    const label = prefix ? `${paint.green(displayText(`${ref.role}/${ref.replica}`))} ` : '';
    write(lines.map((line) => `${label}${shown(line)}\n`).join(''));
  };
}

/** Writes log lines as JSON lines, one `{"role","replica","line"}` object each (`txs log --json`). */
export function jsonLineWriter(
  write: (text: string) => void,
): (ref: ReplicaRef, lines: readonly string[]) => void {
  return (ref, lines) => {
    write(
      lines.map((line) => `${JSON.stringify({ role: ref.role, replica: ref.replica, line })}\n`).join(''),
    );
  };
}

/**
 * Polls the app's state every few seconds until it is terminal and marks `watch` (for `txs log -t`, where
 * nothing else is watching the state).
 */
export async function watchUntilTerminal(options: {
  client: TxsClient;
  handle: string;
  watch: TerminalWatch;
  now: () => number;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  signal?: AbortSignal;
  initialState?: AppState;
}): Promise<void> {
  const { client, handle, watch, now, sleep, signal } = options;
  let state = options.initialState;
  let delay = 2_000;
  for (;;) {
    if (state !== undefined && isTerminal(state)) {
      watch.markTerminal(now());
      return;
    }
    await sleep(delay, signal);
    delay = Math.min(10_000, Math.round(delay * 1.5));
    state = (await client.getApp(handle)).status.state;
  }
}
