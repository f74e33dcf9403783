/**
 * `txs log IDENTIFIER`: print or follow the logs of an app, a role or some replicas (TorchX `cmd_log`).
 *
 * @module
 */
import { type Command, Option } from 'commander';
import { isStarted } from '../../specs/app-state.js';
import type { AppResponse, LogStreams } from '../api-types.js';
import { ExitCode, InterruptedError } from '../errors.js';
import { addCommonOptions, type CommonOptions, type Invocation } from '../invocation.js';
import { parseLogTarget } from '../log-target.js';
import {
  followLogs,
  jsonLineWriter,
  type ReplicaRef,
  selectReplicas,
  textLineWriter,
  watchUntilTerminal,
} from '../logs.js';
import { parseTimeArg } from '../time.js';
import { TerminalWatch } from '../wait.js';

interface LogOptions extends CommonOptions {
  regex?: string;
  since?: string;
  until?: string;
  tail?: boolean;
  streams?: LogStreams;
}

/** Adds `log` to `program`. */
export function registerLog(program: Command, invocation: Invocation): void {
  addCommonOptions(
    program
      .command('log')
      .summary('print or follow the logs of an app')
      .description(
        'Prints the logs of an app, of one role, or of some replicas of a role. With several replicas each ' +
          'line is prefixed with role/replica.',
      )
      .argument('<identifier>', 'SCHEDULER://[SESSION]/APP_ID[/ROLE[/REPLICA[,REPLICA...]]]')
      .option('--regex <pattern>', 'only lines matching this regular expression')
      .option('--since <time>', 'only lines at or after: ISO-8601, epoch ms, or a duration ago (10m, 2h)')
      .option('--until <time>', 'only lines before this time (same forms as --since)')
      .option('-t, --tail', 'follow the logs until the app finishes')
      .addOption(
        new Option('--streams <streams>', 'which output streams (default: the scheduler’s)').choices([
          'combined',
          'stdout',
          'stderr',
        ]),
      ),
    { json: true },
  ).action(async (identifier: string, options: LogOptions) => {
    invocation.exitCode = await logCommand(invocation, identifier, options);
  });
}

async function logCommand(invocation: Invocation, identifier: string, options: LogOptions): Promise<number> {
  const { io } = invocation;
  const target = parseLogTarget(identifier);
  const now = io.now();
  const since = options.since === undefined ? undefined : parseTimeArg(options.since, '--since', now);
  const until = options.until === undefined ? undefined : parseTimeArg(options.until, '--until', now);
  const client = await invocation.client(options);
  const follow = options.tail === true;
  let app: AppResponse | undefined;
  let replicas: ReplicaRef[];
  if (target.role !== undefined && target.replicas !== undefined) {
    replicas = target.replicas.map((replica) => ({ role: target.role ?? '', replica }));
    if (follow) app = await client.getApp(target.handle);
  } else {
    app = await client.getApp(target.handle);
    replicas = selectReplicas(app.app, target.role);
  }
  if (app !== undefined && !follow && !isStarted(app.status.state)) {
    invocation.err(`${target.handle} is ${app.status.state}: no logs yet (add -t to follow them)`);
  }
  const controller = new AbortController();
  let interrupted = false;
  const stopInterrupt = io.onInterrupt(() => {
    interrupted = true;
    controller.abort();
  });
  const watch = new TerminalWatch();
  const json = options.json === true;
  try {
    const watcher =
      follow && app !== undefined
        ? watchUntilTerminal({
            client,
            handle: target.handle,
            watch,
            now: () => io.now(),
            sleep: (ms, s) => io.sleep(ms, s),
            signal: controller.signal,
            initialState: app.status.state,
          }).catch((error: unknown) => {
            // Without the state, followers still stop when the API says a log is complete.
            if (!controller.signal.aborted) {
              invocation.warn(
                `cannot watch the app's state: ${error instanceof Error ? error.message : error}`,
              );
            }
          })
        : undefined;
    await followLogs({
      client,
      handle: target.handle,
      replicas,
      follow,
      ...(options.regex === undefined ? {} : { regex: options.regex }),
      ...(since === undefined ? {} : { since }),
      ...(until === undefined ? {} : { until }),
      ...(options.streams === undefined ? {} : { streams: options.streams }),
      onLines: json
        ? jsonLineWriter((text) => io.stdout.write(text))
        : textLineWriter(
            (text) => io.stdout.write(text),
            invocation.paint(io.stdout),
            replicas.length > 1,
            io.stdout.isTTY,
          ),
      sleep: (ms, s) => io.sleep(ms, s),
      now: () => io.now(),
      signal: controller.signal,
      terminalWatch: watch,
    });
    controller.abort();
    await watcher;
    return ExitCode.OK;
  } catch (error) {
    if (interrupted) {
      throw new InterruptedError(`stopped following ${target.handle}; the app keeps running`);
    }
    throw error;
  } finally {
    stopInterrupt();
    controller.abort();
  }
}
