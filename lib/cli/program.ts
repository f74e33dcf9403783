/**
 * The `txs` command line: TorchX's commands (`run`, `status`, `describe`, `log`, `list`, `cancel`,
 * `delete`, `runopts`, `builtins`, plus `wait`) over the HTTP API, parsed with commander.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { APP_STATES, type AppDef, type AppState, isAppState, isStarted } from '../specs/index.js';
import type { AppResponse, AppSummary, LogStreams, RunRequestBody } from './api-types.js';
import { buildCfg, runOptsFromDescriptions } from './cfg.js';
import { TxsClient } from './client.js';
import { loadConfig, type TxsConfig } from './config.js';
import { resolveEndpoint } from './endpoint.js';
import { AppNotFoundError, CliError, ExitCode, InterruptedError, UsageError } from './errors.js';
import {
  formatAppList,
  formatBuiltin,
  formatBuiltinList,
  formatDryRun,
  formatRunOpts,
  formatStatus,
  formatYaml,
  type Painter,
  painter,
} from './format.js';
import { type CliIO, type OutputStream, useColor } from './io.js';
import { parseLogTarget } from './log-target.js';
import {
  followLogs,
  jsonLineWriter,
  type ReplicaRef,
  selectReplicas,
  textLineWriter,
  watchUntilTerminal,
} from './logs.js';
import { parseTimeArg } from './time.js';
import { TerminalWatch, TransitionPrinter, waitForApp } from './wait.js';

/** The scheduler `txs run` uses when neither `-s` nor `[cli:run] scheduler` names one. */
export const DEFAULT_SCHEDULER = 'local_cwd';

/** Exit code for an unexpected internal error (a bug in `txs`). */
export const EXIT_INTERNAL = 70;

/** Options every command accepts. */
interface CommonOptions {
  endpoint?: string;
  profile?: string;
  region?: string;
  json?: boolean;
}

interface RunOptions extends CommonOptions {
  scheduler?: string;
  cfg?: string;
  app?: string;
  session?: string;
  dryrun?: boolean;
  wait?: boolean;
  log?: boolean;
  idempotencyKey?: string;
}

interface LogOptions extends CommonOptions {
  regex?: string;
  since?: string;
  until?: string;
  tail?: boolean;
  streams?: LogStreams;
}

interface ListOptions extends CommonOptions {
  scheduler?: string;
  state?: AppState[];
  session?: string;
  since?: string;
  limit: number;
  owner?: string;
}

/** The version in package.json. */
function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version?: string;
    };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}

/** State shared by the commands of one invocation. */
class Invocation {
  private configPromise: Promise<TxsConfig> | undefined;
  exitCode: number = ExitCode.OK;

  constructor(readonly io: CliIO) {}

  config(): Promise<TxsConfig> {
    this.configPromise ??= loadConfig(this.io);
    return this.configPromise;
  }

  async client(options: CommonOptions): Promise<TxsClient> {
    const settings = resolveEndpoint(options, await this.config(), this.io);
    const user = this.io.env.TXS_USER;
    // The AWS credential chain and signer load only when signing: local use stays fast.
    const signer =
      settings.sign && settings.region !== undefined
        ? (await import('./sigv4.js')).createSigV4Signer({
            region: settings.region,
            ...(settings.profile === undefined ? {} : { profile: settings.profile }),
          })
        : undefined;
    return new TxsClient({
      endpoint: settings.url,
      endpointSource: settings.source,
      ...(settings.region === undefined ? {} : { region: settings.region }),
      ...(signer === undefined ? {} : { signer }),
      ...(user === undefined || user === '' ? {} : { headers: { 'x-txs-user': user } }),
      userAgent: `txs/${packageVersion()} node/${process.versions.node}`,
      sleep: (ms) => this.io.sleep(ms),
    });
  }

  paint(stream: OutputStream): Painter {
    return painter(useColor(this.io, stream));
  }

  out(text: string): void {
    this.io.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  }

  err(text: string): void {
    this.io.stderr.write(text.endsWith('\n') ? text : `${text}\n`);
  }

  warn(text: string): void {
    this.err(`warning: ${text}`);
  }

  json(value: unknown): void {
    this.out(JSON.stringify(value, null, 2));
  }
}

function addCommonOptions(command: Command, { json = true } = {}): Command {
  command
    .option('--endpoint <url>', 'API base URL (default: TXS_ENDPOINT, [txs] endpoint, http://127.0.0.1:8080)')
    .option('--profile <name>', 'AWS profile for SigV4 credentials (default: AWS_PROFILE, the SDK chain)')
    .option('--region <region>', 'signing region when the host does not name one (default: AWS_REGION)');
  if (json) command.option('--json', 'print the API’s JSON instead of text');
  return command;
}

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError('must be a positive integer');
  return n;
}

function collectStates(value: string, previous: AppState[] | undefined): AppState[] {
  const states = value
    .split(',')
    .map((s) => s.trim().toUpperCase())
    .filter((s) => s !== '');
  for (const s of states) {
    if (!isAppState(s))
      throw new InvalidArgumentError(`${s} is not a state; use one of ${APP_STATES.join(', ')}`);
  }
  return [...(previous ?? []), ...(states as AppState[])];
}

const RUN_VALUE_OPTIONS = new Set([
  '-s',
  '--scheduler',
  '--cfg',
  '--app',
  '--session',
  '--endpoint',
  '--profile',
  '--region',
  '--idempotency-key',
]);
const CFG_SPELLINGS = ['-cfg', '--scheduler_args', '--scheduler-args'];

/**
 * Rewrites TorchX's `-cfg` (and `--scheduler_args`) to `--cfg` among `txs run`'s own options — never
 * inside the component's arguments, which start at the component name.
 *
 * @example
 * ```ts
 * normalizeRunArgv(['run', '-cfg', 'queue=q', 'utils.echo', '-cfg']); // ['run', '--cfg', 'queue=q', 'utils.echo', '-cfg']
 * ```
 */
export function normalizeRunArgv(argv: readonly string[]): string[] {
  const result = [...argv];
  const commandIndex = result.findIndex((token) => !token.startsWith('-'));
  if (commandIndex < 0 || result[commandIndex] !== 'run') return result;
  for (let i = commandIndex + 1; i < result.length; i++) {
    const token = result[i] ?? '';
    if (token === '--' || !token.startsWith('-')) break;
    const [flag = '', ...rest] = token.split('=');
    if (CFG_SPELLINGS.includes(flag)) {
      result[i] = rest.length > 0 ? `--cfg=${rest.join('=')}` : '--cfg';
      if (rest.length === 0) i += 1;
      continue;
    }
    if (RUN_VALUE_OPTIONS.has(token)) i += 1;
  }
  return result;
}

/**
 * Builds the commander program. Each action stores its exit code in `invocation.exitCode`; errors
 * propagate to {@link main}.
 */
function buildProgram(invocation: Invocation): Command {
  const { io } = invocation;
  const program = new Command('txs');
  program
    .description(
      'torchx-serverless: launch, watch and manage TorchX-style apps over the HTTP API\n' +
        '(AWS Batch, SageMaker, or local processes through the local server).',
    )
    .version(packageVersion(), '-V, --version', 'print the txs version')
    .enablePositionalOptions()
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
    })
    .addHelpText(
      'after',
      '\nExamples:\n' +
        '  txs run --wait utils.echo --msg hello\n' +
        '  txs run -s aws_batch -cfg queue=gpu dist.ddp -j 2x8 --script train.py\n' +
        '  txs log -t local_cwd://torchx/echo-k3x9\n' +
        '  txs list --state RUNNING\n' +
        '\nExit codes: 0 ok, 1 app did not succeed (--wait), 2 usage, 3 unknown app, 4 auth, 5 endpoint unavailable.',
    );

  addCommonOptions(
    program
      .command('run')
      .summary('run a component (or an AppDef file) on a scheduler')
      .description(
        'Runs a builtin component with its arguments, or the AppDef in --app. Everything after the component\n' +
          'name is passed to the component verbatim, so txs options go before it.',
      )
      .option(
        '-s, --scheduler <name>',
        `scheduler to run on (default: [cli:run] scheduler, ${DEFAULT_SCHEDULER})`,
      )
      .option('--cfg <k=v,...>', 'run options, e.g. queue=gpu,priority=5 (also -cfg, --scheduler_args)')
      .option('--app <file>', 'run the AppDef JSON in this file (- for stdin) instead of a component')
      .option('--session <name>', 'session name in the handle (default: torchx)')
      .option('--dryrun', 'print the scheduler request without submitting anything')
      .option('--wait', 'wait for the app to finish; exit 0 only if it SUCCEEDED')
      .option('--log', 'stream the logs of every replica while waiting (implies --wait)')
      .option('--idempotency-key <key>', 'submit at most once for this key (default: a fresh key per run)')
      .argument('[component]', 'builtin component, e.g. utils.echo, dist.ddp (see `txs builtins`)')
      .argument('[args...]', 'arguments of the component')
      .passThroughOptions(),
  ).action(async (component: string | undefined, args: string[], options: RunOptions) => {
    invocation.exitCode = await runCommand(invocation, component, args, options);
  });

  addCommonOptions(
    program
      .command('status')
      .summary('print the status of an app')
      .argument('<handle>', 'app handle, e.g. local_cwd://torchx/echo-k3x9')
      .option('--roles <names>', 'only these roles (comma-separated)')
      .option('--refresh', 'ask the scheduler now instead of reading the last recorded state'),
  ).action(async (handle: string, options: CommonOptions & { roles?: string; refresh?: boolean }) => {
    const client = await invocation.client(options);
    const app = await client.getApp(handle, { refresh: options.refresh === true });
    if (options.json) invocation.json(app);
    else {
      const roles = options.roles
        ?.split(',')
        .map((r) => r.trim())
        .filter((r) => r !== '');
      invocation.out(formatStatus(app, roles));
    }
  });

  addCommonOptions(
    program.command('describe').summary('print the AppDef of an app').argument('<handle>', 'app handle'),
  ).action(async (handle: string, options: CommonOptions) => {
    const client = await invocation.client(options);
    const app = await client.getApp(handle);
    if (options.json) invocation.json(app);
    else invocation.out(formatYaml(app.app));
  });

  addCommonOptions(
    program
      .command('log')
      .summary('print or follow the logs of an app')
      .description(
        'Prints the logs of an app, of one role, or of some replicas of a role. With several replicas each\n' +
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

  addCommonOptions(
    program
      .command('list')
      .summary('list your apps, newest first')
      .option('-s, --scheduler <name>', 'only apps of this scheduler')
      .option('--state <states>', 'only apps in these states (comma-separated or repeated)', collectStates)
      .option('--session <name>', 'only apps of this session')
      .option('--since <time>', 'only apps created since: ISO-8601, epoch ms, or a duration ago (1d)')
      .option('--limit <n>', 'show at most this many apps', positiveInt, 50)
      .option('--owner <owner>', "deployment admins: 'all' for every owner's apps, or one owner's"),
  ).action(async (options: ListOptions) => {
    await listCommand(invocation, options);
  });

  for (const [name, summary] of [
    ['cancel', 'cancel an app (idempotent)'],
    ['delete', "cancel an app if it runs and remove it from the scheduler's data plane"],
  ] as const) {
    addCommonOptions(program.command(name).summary(summary).argument('<handle>', 'app handle')).action(
      async (handle: string, options: CommonOptions) => {
        const client = await invocation.client(options);
        const answer = name === 'cancel' ? await client.cancel(handle) : await client.delete(handle);
        if (options.json) invocation.json(answer);
        else
          invocation.out(
            `${name === 'cancel' ? 'cancel' : 'delete'} requested for ${answer.handle} (state: ${answer.state})`,
          );
      },
    );
  }

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

  addCommonOptions(
    program
      .command('runopts')
      .summary('print the run options of the schedulers')
      .argument('[scheduler]', 'only this scheduler'),
  ).action(async (scheduler: string | undefined, options: CommonOptions) => {
    const client = await invocation.client(options);
    const all = await client.schedulers();
    const schedulers = scheduler === undefined ? all : all.filter((s) => s.name === scheduler);
    if (schedulers.length === 0 && scheduler !== undefined) {
      throw new UsageError(
        `no scheduler ${scheduler} at ${client.endpoint}`,
        `schedulers: ${all.map((s) => s.name).join(', ')}`,
      );
    }
    if (options.json) invocation.json(schedulers);
    else invocation.out(formatRunOpts(schedulers, invocation.paint(io.stdout)));
  });

  addCommonOptions(
    program
      .command('builtins')
      .summary('list the builtin components, or show one')
      .argument('[component]', 'show the arguments of this component'),
  ).action(async (name: string | undefined, options: CommonOptions) => {
    const client = await invocation.client(options);
    const components = await client.components();
    if (name === undefined) {
      if (options.json) invocation.json(components);
      else invocation.out(formatBuiltinList(components));
      return;
    }
    const component = components.find((c) => c.name === name);
    if (component === undefined) {
      throw new UsageError(
        `no builtin component ${name}`,
        `builtins: ${components.map((c) => c.name).join(', ')}`,
      );
    }
    if (options.json) invocation.json(component);
    else invocation.out(formatBuiltin(component));
  });

  return program;
}

async function readAppFile(invocation: Invocation, path: string): Promise<AppDef> {
  let text: string;
  try {
    text = path === '-' ? await invocation.io.readStdin() : await invocation.io.readFile(path);
  } catch (error) {
    throw new UsageError(`cannot read --app ${path}: ${(error as Error).message}`);
  }
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      throw new Error('it is not a JSON object');
    }
    return parsed as AppDef;
  } catch (error) {
    throw new UsageError(
      `--app ${path} is not an AppDef JSON object: ${(error as Error).message}`,
      'see `txs describe <handle> --json` for the shape (name, roles[…], metadata)',
    );
  }
}

async function runCommand(
  invocation: Invocation,
  componentArg: string | undefined,
  componentArgs: string[],
  options: RunOptions,
): Promise<number> {
  const config = await invocation.config();
  let component = componentArg;
  let args = [...componentArgs];
  // TorchX: when the first word is an option (e.g. `txs run -- --msg hi`), it and the rest are arguments of
  // the component named in [cli:run] of .txsconfig.
  if (component?.startsWith('-')) {
    args = [component, ...args];
    component = undefined;
  }
  if (options.app !== undefined && component !== undefined) {
    throw new UsageError(
      `give either a component (${component}) or --app ${options.app}, not both`,
      'txs run --app app.json, or txs run utils.echo --msg hi',
    );
  }
  if (options.app === undefined && component === undefined) component = config.get('cli:run', 'component');
  if (options.app === undefined && (component === undefined || component === '')) {
    throw new UsageError(
      'missing component name: give one, or --app app.json, or set component in [cli:run] of .txsconfig',
      '`txs builtins` lists the components, e.g. txs run utils.echo --msg hello',
    );
  }
  if (options.dryrun && (options.wait || options.log)) {
    throw new UsageError('--dryrun submits nothing, so it cannot be combined with --wait or --log');
  }
  const app = options.app === undefined ? undefined : await readAppFile(invocation, options.app);
  const scheduler = options.scheduler ?? config.get('cli:run', 'scheduler') ?? DEFAULT_SCHEDULER;
  const session = options.session ?? config.get('cli:run', 'session');
  const client = await invocation.client(options);

  const needsRunOpts = options.cfg !== undefined || config.section(scheduler).length > 0;
  let cfg: RunRequestBody['cfg'];
  if (needsRunOpts) {
    const schedulers = await client.schedulers();
    const info = schedulers.find((s) => s.name === scheduler);
    if (info === undefined) {
      throw new UsageError(
        `no scheduler ${scheduler} at ${client.endpoint}`,
        `use -s with one of: ${schedulers.map((s) => s.name).join(', ') || '<none>'}`,
      );
    }
    cfg = buildCfg({
      scheduler,
      runOpts: runOptsFromDescriptions(info.runOpts),
      ...(options.cfg === undefined ? {} : { literal: options.cfg }),
      config,
      warn: (message) => invocation.warn(message),
    });
  }
  const common = {
    scheduler,
    ...(cfg === undefined || Object.keys(cfg).length === 0 ? {} : { cfg }),
    ...(session === undefined ? {} : { session }),
  };
  const body: RunRequestBody =
    app !== undefined ? { ...common, app } : { ...common, component: component ?? '', args };

  if (options.dryrun) {
    const dryrun = await client.dryrun(body);
    if (options.json) invocation.json(dryrun);
    else invocation.out(formatDryRun(dryrun));
    return ExitCode.OK;
  }

  const submitted = await client.run(body, options.idempotencyKey ?? randomUUID());
  if (options.json) invocation.json(submitted);
  else invocation.out(submitted.handle);
  if (!options.wait && !options.log) {
    if (invocation.io.stderr.isTTY && !options.json) {
      invocation.err(
        `follow it with: txs log -t ${submitted.handle}   (status: txs status ${submitted.handle})`,
      );
    }
    return ExitCode.OK;
  }
  return waitAndReport(invocation, client, submitted.handle, {
    log: options.log === true,
    json: options.json === true,
    justSubmitted: true,
  });
}

/**
 * Waits for `handle` to finish (optionally streaming its logs to stderr), prints transitions to stderr and
 * returns 0 when it SUCCEEDED, 1 otherwise. Ctrl-C stops waiting, not the app.
 */
async function waitAndReport(
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
    invocation.err(`${handle} finished ${final.status.state}`);
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
        : textLineWriter((text) => io.stdout.write(text), invocation.paint(io.stdout), replicas.length > 1),
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

async function listCommand(invocation: Invocation, options: ListOptions): Promise<void> {
  const client = await invocation.client(options);
  const since =
    options.since === undefined ? undefined : parseTimeArg(options.since, '--since', invocation.io.now());
  const apps: AppSummary[] = [];
  let nextToken: string | undefined;
  do {
    const page = await client.listApps({
      ...(options.scheduler === undefined ? {} : { scheduler: options.scheduler }),
      ...(options.state === undefined ? {} : { states: options.state }),
      ...(options.session === undefined ? {} : { session: options.session }),
      ...(since === undefined ? {} : { since }),
      ...(options.owner === undefined ? {} : { owner: options.owner }),
      limit: Math.min(100, options.limit - apps.length),
      ...(nextToken === undefined ? {} : { nextToken }),
    });
    apps.push(...page.apps.slice(0, options.limit - apps.length));
    nextToken = page.nextToken;
  } while (nextToken !== undefined && apps.length < options.limit);
  if (options.json) {
    invocation.json(nextToken === undefined ? { apps } : { apps, nextToken });
    return;
  }
  if (apps.length === 0) {
    invocation.err('no apps');
    return;
  }
  invocation.out(formatAppList(apps));
  if (nextToken !== undefined) invocation.err(`(more apps: raise --limit above ${options.limit})`);
}

/** Prints an error as `error: …` and `hint: …` lines. */
function reportError(invocation: Invocation, error: CliError): void {
  invocation.err(`error: ${error.message}`);
  const shown = new Set([error.message]);
  for (const issue of error.issues) {
    const line = `${issue.path}: ${issue.message}`;
    if (!error.message.includes(issue.message) && !shown.has(line)) {
      invocation.err(`  ${line}`);
      shown.add(line);
    }
  }
  if (error.hint !== undefined) invocation.err(`hint: ${error.hint}`);
}

/**
 * Runs `txs` with `argv` (the arguments after `txs`) and returns the exit code. Never calls
 * `process.exit`.
 *
 * @example
 * ```ts
 * process.exitCode = await main(process.argv.slice(2), processIO());
 * ```
 */
export async function main(argv: readonly string[], io: CliIO): Promise<number> {
  const invocation = new Invocation(io);
  const program = buildProgram(invocation);
  try {
    if (argv.length === 0) {
      program.outputHelp();
      return ExitCode.USAGE;
    }
    await program.parseAsync(normalizeRunArgv(argv), { from: 'user' });
    return invocation.exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      return error.exitCode === 0 ? ExitCode.OK : ExitCode.USAGE;
    }
    if (error instanceof CliError) {
      reportError(invocation, error);
      return error.exitCode;
    }
    const message = error instanceof Error ? error.message : String(error);
    invocation.err(`error: internal error in txs: ${message}`);
    if (io.env.TXS_DEBUG && error instanceof Error && error.stack) invocation.err(error.stack);
    invocation.err('hint: this is a bug; rerun with TXS_DEBUG=1 for a stack trace and report it');
    return EXIT_INTERNAL;
  }
}
