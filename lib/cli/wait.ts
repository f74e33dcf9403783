/**
 * `--wait`: polls an app until it is terminal and prints each state transition as it happens.
 *
 * @module
 */
import { type AppState, isTerminal } from '../specs/app-state.js';
import { displayText } from '../specs/names.js';
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

/**
 * Prints state transitions, one line each: elapsed time since the app was created, the state, and the
 * scheduler's reason when there is one (except for SUCCEEDED). Transitions come from the app's `history`, so a state that lasted
 * less than a poll interval is still shown. On a terminal (and when `live`), the current state's line is
 * redrawn with a running clock.
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
    const text = `${formatElapsed(this.now() - created).padStart(8)}  ${displayText(state)} …`;
    this.out.write(`${TERMINAL_CONTROLS.clearLine}${text}`);
    this.liveText = text;
  }

  private line(elapsedMs: number, state: AppState, reason: string | undefined): void {
    if (state === this.lastState) return;
    this.clearLive();
    this.lastState = state;
    // A success needs no explanation ("all replicas exited with code 0"); other states' reasons help.
    const why =
      reason === undefined || reason === '' || state === 'SUCCEEDED' ? '' : `  (${displayText(reason)})`;
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
 * Polls `GET /v1/apps/{scheduler}/{appId}` until the app is terminal and returns the last answer. Polls
 * every second for 30 s, then backs off to every 10 s; once a minute it adds `refresh=true`.
 *
 * @throws the client's errors; an AbortError when `signal` aborts.
 */
export async function waitForApp(options: WaitOptions): Promise<AppResponse> {
  const { client, handle, now, sleep, signal } = options;
  const started = now();
  let lastRefresh = started;
  let delay = 1_000;
  let app = options.initial ?? (await client.getApp(handle));
  for (;;) {
    options.onUpdate?.(app);
    if (isTerminal(app.status.state)) {
      options.terminalWatch?.markTerminal(now());
      return app;
    }
    delay = pollDelay(now() - started, delay);
    await sleep(delay, signal);
    signal?.throwIfAborted();
    const refresh = now() - lastRefresh >= REFRESH_EVERY_MS;
    if (refresh) lastRefresh = now();
    app = await client.getApp(handle, { refresh });
  }
}
