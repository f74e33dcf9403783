/**
 * `txs wait HANDLE`, and the waiting `txs run --wait` shares: transitions on stderr, optional log
 * streaming, exit 0 only when the app SUCCEEDED.
 *
 * @module
 */
import type { Command } from 'commander';
import { displayText } from '../../specs/names.js';
import type { AppResponse } from '../api-types.js';
import type { TxsClient } from '../client.js';
import { AppNotFoundError, ExitCode, InterruptedError } from '../errors.js';
import { formatStatus } from '../format.js';
import { addCommonOptions, type CommonOptions, type Invocation } from '../invocation.js';
import { followLogs, selectReplicas, textLineWriter } from '../logs.js';
import { TerminalWatch, TransitionPrinter, waitForApp } from '../wait.js';

/** Adds `wait` to `program`. */
export function registerWait(program: Command, invocation: Invocation): void {
  addCommonOptions(
    program
      .command('wait')
      .summary('wait for an app to finish; exit 0 only if it SUCCEEDED')
      .argument('<handle>', 'app handle')
      .option('--log', 'stream the logs of every replica while waiting'),
  ).action(async (handle: string, options: CommonOptions & { log?: boolean }) => {
    const client = await invocation.client(options);
    invocation.exitCode = await waitAndReport(invocation, client, handle, {
      log: options.log === true,
      json: options.json === true,
    });
  });
}

/**
 * Waits for `handle` to finish (optionally streaming its logs to stderr), prints transitions to stderr and
 * returns 0 when it SUCCEEDED, 1 otherwise. Ctrl-C stops waiting, not the app.
 */
export async function waitAndReport(
  invocation: Invocation,
  client: TxsClient,
  handle: string,
  options: { log: boolean; json: boolean; justSubmitted?: boolean },
): Promise<number> {
  const { io } = invocation;
  const controller = new AbortController();
  let interrupted = false;
  const stopInterrupt = io.onInterrupt(() => {
    interrupted = true;
    controller.abort();
  });
  const live = io.stderr.isTTY && !options.log;
  const printer = new TransitionPrinter(io.stderr, () => io.now(), { live });
  const watch = new TerminalWatch();
  let liveTimer: ReturnType<typeof setInterval> | undefined;
  try {
    invocation.err(`waiting for ${handle} (Ctrl-C stops waiting; the app keeps running)`);
    const first = options.justSubmitted
      ? await getAppJustSubmitted(client, handle, (ms) => io.sleep(ms, controller.signal))
      : await client.getApp(handle);
    if (live) liveTimer = setInterval(() => printer.redrawLive(), 1_000);
    const logs = options.log
      ? startLogFollowers(invocation, client, first, watch, controller.signal)
      : undefined;
    const final = await waitForApp({
      client,
      handle,
      initial: first,
      now: () => io.now(),
      sleep: (ms, signal) => io.sleep(ms, signal),
      signal: controller.signal,
      onUpdate: (app) => printer.update(app),
      terminalWatch: watch,
    });
    if (liveTimer !== undefined) clearInterval(liveTimer);
    printer.clearLive();
    await logs;
    if (options.json) invocation.json(final);
    if (final.status.state === 'SUCCEEDED') return ExitCode.OK;
    invocation.err(`${handle} finished ${displayText(final.status.state)}`);
    invocation.err(formatStatus(final));
    return ExitCode.APP_FAILED;
  } catch (error) {
    if (interrupted) {
      printer.clearLive();
      throw new InterruptedError(
        `stopped waiting for ${handle}; the app keeps running`,
        `cancel it with: txs cancel ${handle}`,
      );
    }
    throw error;
  } finally {
    if (liveTimer !== undefined) clearInterval(liveTimer);
    stopInterrupt();
    controller.abort(); // stops log followers still polling after an error
  }
}

/**
 * Reads an app right after its submission, retrying "unknown app" a few times in case the store's read
 * lags its write.
 */
async function getAppJustSubmitted(
  client: TxsClient,
  handle: string,
  sleep: (ms: number) => Promise<void>,
): Promise<AppResponse> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await client.getApp(handle);
    } catch (error) {
      if (!(error instanceof AppNotFoundError) || attempt >= 3) throw error;
      await sleep(1_000);
    }
  }
}

/** Starts following every replica's logs to stderr; errors become warnings so waiting goes on. */
function startLogFollowers(
  invocation: Invocation,
  client: TxsClient,
  app: AppResponse,
  watch: TerminalWatch,
  signal: AbortSignal,
): Promise<void> {
  const { io } = invocation;
  const replicas = selectReplicas(app.app);
  return followLogs({
    client,
    handle: app.handle,
    replicas,
    follow: true,
    onLines: textLineWriter(
      (text) => io.stderr.write(text),
      invocation.paint(io.stderr),
      replicas.length > 1,
      true,
    ),
    sleep: (ms, s) => io.sleep(ms, s),
    now: () => io.now(),
    signal,
    terminalWatch: watch,
  }).catch((error: unknown) => {
    if (signal.aborted) return;
    const message = error instanceof Error ? error.message : String(error);
    invocation.warn(`stopped streaming logs: ${message}`);
  });
}
