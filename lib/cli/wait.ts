/**
 * `--wait`: polls an app until it is terminal and prints each state transition as it happens.
 *
 * @module
 */
import { type AppState, isTerminal } from '../specs/app-state.js';
import { displayText } from '../specs/names.js';
import { formatStateReason, type StateReason } from '../specs/state-reason.js';
import type { AppResponse } from './api-types.js';
import type { TxsClient } from './client.js';
import type { OutputStream } from './io.js';
import { TERMINAL_CONTROLS } from './terminal-text.js';
import { formatElapsed, toEpochMs } from './time.js';

/** Shared knowledge that an app reached a terminal state, for log followers to drain and stop. */
export class TerminalWatch {
  private seenAt: number | undefined;

  /** Records that the app was seen terminal at `now` (epoch ms); later calls keep the first time. */
  markTerminal(now: number): void {
    this.seenAt ??= now;
  }

  /** When the app was first seen terminal, or undefined while it runs. */
  get terminalAt(): number | undefined {
    return this.seenAt;
  }
}

/**
 * Delay before the next status poll: 1 s for the first 30 s, then growing by half each poll up to 10 s.
 *
 * @example
 * ```ts
 * pollDelay(5_000, 1_000); // 1000
 * pollDelay(120_000, 4_000); // 6000
 * ```
 */
export function pollDelay(waitedMs: number, previousDelayMs: number): number {
  if (waitedMs < 30_000) return 1_000;
  return Math.min(10_000, Math.round(previousDelayMs * 1.5));
}

/** How often `--wait` asks the scheduler itself (`?refresh=true`), so a lost event cannot stall it. */
export const REFRESH_EVERY_MS = 60_000;

/** States in which the app waits for the scheduler: their reason reads "waiting for 40m00s: …". */
const WAITING: ReadonlySet<AppState> = new Set<AppState>(['UNSUBMITTED', 'SUBMITTED', 'PENDING']);

/**
 * A reason on one progress line: its lines joined with spaces (a failure's reason quotes the replica's last
 * stderr lines, which the app's status after the wait shows as they are), then escaped.
 */
function oneLine(text: string): string {
  return displayText(text.trim().replace(/\s*\n\s*/g, ' '));
}

/** `waiting for 40m00s: CAPACITY:… (aws_batch)` for a waiting state; without "waiting" for others. */
function reasonText(state: AppState, reason: StateReason, now: number): string {
  return oneLine(`${WAITING.has(state) ? 'waiting ' : ''}${formatStateReason(reason, now, formatElapsed)}`);
}

/**
 * Prints state transitions, one line each: elapsed time since the app was created, the state, and the
 * scheduler's reason when there is one (except for SUCCEEDED). Transitions come from the app's `history`, so a state that lasted
 * less than a poll interval is still shown. While the app is not finished, each new reason the scheduler
 * gives for its state (`stateReason`) is a line too, with how long it has held:
 * `   3m12s  PENDING  waiting for 40m00s: CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY - …`. On a terminal (and
 * when `live`), the current state's line is redrawn with a running clock and the current reason.
 */
export class TransitionPrinter {
  private readonly printed = new Set<string>();
  private lastState: AppState | undefined;
  private liveText: string | undefined;
  private app: AppResponse | undefined;

  constructor(
    private readonly out: OutputStream,
    private readonly now: () => number,
    private readonly options: { live: boolean } = { live: false },
  ) {}

  /** Prints what is new in `app` since the last call. */
  update(app: AppResponse): void {
    this.app = app;
    const created = toEpochMs(app.createdAt) ?? this.now();
    const entries = [...(app.history ?? [])].sort(
      (a, b) => (toEpochMs(a.time) ?? 0) - (toEpochMs(b.time) ?? 0),
    );
    for (const entry of entries) {
      const key = `${toEpochMs(entry.time)}|${entry.from}|${entry.to}`;
      if (this.printed.has(key)) continue;
      this.printed.add(key);
      this.line((toEpochMs(entry.time) ?? created) - created, entry.to, entry.reason);
    }
    const state = app.status.state;
    if (state !== this.lastState) this.line(this.now() - created, state, undefined);
    const reason = app.status.stateReason;
    if (reason !== undefined && !isTerminal(state)) {
      const key = `reason|${state}|${reason.code ?? ''}|${reason.text}|${reason.since}`;
      if (!this.printed.has(key)) {
        this.printed.add(key);
        this.clearLive();
        const text = reasonText(state, reason, this.now());
        this.out.write(
          `${formatElapsed(this.now() - created).padStart(8)}  ${displayText(state)}  ${text}\n`,
        );
      }
    }
    this.redrawLive();
  }

  /** Clears the live line (call before writing anything else to the same stream). */
  clearLive(): void {
    if (this.liveText !== undefined) {
      this.out.write(TERMINAL_CONTROLS.clearLine);
      this.liveText = undefined;
    }
  }

  /** Redraws the live line with the current elapsed time (terminals only). */
  redrawLive(): void {
    if (!this.options.live || this.app === undefined) return;
    const state = this.app.status.state;
    if (isTerminal(state)) {
      this.clearLive();
      return;
    }
    const created = toEpochMs(this.app.createdAt) ?? this.now();
    const reason = this.app.status.stateReason;
    const why = reason === undefined ? '' : `  ${reasonText(state, reason, this.now()).slice(0, 100)}`;
    const text = `${formatElapsed(this.now() - created).padStart(8)}  ${displayText(state)} …${why}`;
    this.out.write(`${TERMINAL_CONTROLS.clearLine}${text}`);
    this.liveText = text;
  }

  private line(elapsedMs: number, state: AppState, reason: string | undefined): void {
    if (state === this.lastState) return;
    this.clearLive();
    this.lastState = state;
    // A success needs no explanation ("all replicas exited with code 0"); other states' reasons help.
    const why =
      reason === undefined || reason === '' || state === 'SUCCEEDED' ? '' : `  (${oneLine(reason)})`;
    this.out.write(`${formatElapsed(elapsedMs).padStart(8)}  ${displayText(state)}${why}\n`);
  }
}

/** Options of {@link waitForApp}. */
export interface WaitOptions {
  client: TxsClient;
  handle: string;
  now: () => number;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  signal?: AbortSignal;
  /** Called with every answer (the printer, log followers). */
  onUpdate?: (app: AppResponse) => void;
  /** The app as already fetched, to skip the first request. */
  initial?: AppResponse;
  terminalWatch?: TerminalWatch;
}

/**
 * Follows `GET /v1/apps/{scheduler}/{appId}` until the app is terminal and returns the last answer. Each
 * request is a long poll (`waitFor=<revision>`): where the server holds it (local mode), a change is seen as
 * soon as it is committed and the next request goes out at once. Where the server answers at once (the
 * deployed API, or a server without long polls), requests are paced: every second for 30 s, then backing off
 * to every 10 s. Once a minute the request is `refresh=true` instead, so a lost event cannot stall the wait.
 *
 * @throws the client's errors; an AbortError when `signal` aborts.
 */
export async function waitForApp(options: WaitOptions): Promise<AppResponse> {
  const { client, handle, now, sleep, signal } = options;
  const withSignal = signal === undefined ? {} : { signal };
  const started = now();
  let lastRefresh = started;
  let delay = 1_000;
  // Whether the server held the last long poll: then nothing needs pacing.
  let longPolls = false;
  let pace = false;
  let app = options.initial ?? (await client.getApp(handle, withSignal));
  for (;;) {
    options.onUpdate?.(app);
    if (isTerminal(app.status.state)) {
      options.terminalWatch?.markTerminal(now());
      return app;
    }
    // A server without long polls (no revision) is always paced, from the first request on.
    if (pace || app.revision === undefined) {
      delay = pollDelay(now() - started, delay);
      await sleep(delay, signal);
    }
    signal?.throwIfAborted();
    if (now() - lastRefresh >= REFRESH_EVERY_MS) {
      lastRefresh = now();
      app = await client.getApp(handle, { refresh: true, ...withSignal });
      pace = !longPolls;
    } else if (app.revision === undefined) {
      // A server older than the long poll: plain paced polls.
      app = await client.getApp(handle, withSignal);
      pace = true;
    } else {
      const answer = await client.waitForChange(handle, app.revision, withSignal);
      app = answer.app;
      longPolls = answer.longPolled;
      pace = !longPolls;
    }
  }
}
