/**
 * `txs run [COMPONENT] [ARGS...]`: run a component or an AppDef file on a scheduler (TorchX `cmd_run`).
 *
 * @module
 */
import type { Command } from 'commander';
import type { AppDef, Cfg } from '../../specs/index.js';
import type { RunRequestBody } from '../api-types.js';
import { buildCfg, literalCfg, runOptsFromDescriptions } from '../cfg.js';
import type { TxsClient } from '../client.js';
import { ExitCode, UsageError } from '../errors.js';
import { formatBuiltin, formatDryRun } from '../format.js';
import { addCommonOptions, type CommonOptions, type Invocation } from '../invocation.js';
import { chooseWorkspace } from '../workspace/choice.js';
import { findBuiltin } from './builtins.js';
import { waitAndReport } from './wait.js';

/** The scheduler `txs run` uses when neither `-s` nor `[cli:run] scheduler` names one. */
export const DEFAULT_SCHEDULER = 'local_cwd';

const LOCAL_CWD = 'local_cwd';

/**
 * A local job runs where `txs` runs, as TorchX's does: `cfg.cwd` is the caller's working directory and
 * `cfg.env` the caller's environment, unless `-cfg` or `.txsconfig` set them — but only for a server proven
 * to run as the caller's own OS user (the local server's own socket, `local-socket.ts`). Any other endpoint
 * (a deployed stack, a loopback TCP address another user may hold) gets neither: the job runs with the
 * server's directory and environment, and a `cfg.env` given explicitly is refused before anything is sent.
 * The server never records the environment's values.
 *
 * @throws UsageError when `cfg.env` is set and the server is not proven the caller's.
 */
async function withCallerContext(
  cfg: Cfg | undefined,
  scheduler: string,
  client: TxsClient,
  invocation: Invocation,
  hasWorkspace: boolean,
): Promise<Cfg | undefined> {
  if (scheduler !== LOCAL_CWD && cfg?.env === undefined) return cfg;
  const own = await client.ownServer();
  if (own.path === undefined) {
    if (cfg?.env !== undefined) {
      throw new UsageError(
        `cfg env is sent only to your own local server, and ${client.endpoint} is not proven to be yours: ${own.why}`,
        'run against the local server you started (npm start) as this user, or remove env from -cfg and .txsconfig',
      );
    }
    const withheld = cfg?.cwd === undefined ? 'environment and working directory are' : 'environment is';
    invocation.warn(
      `${client.endpoint} is not proven to be your own local server (${own.why}): your ${withheld} not ` +
        "sent; the job runs with the server's",
    );
    return cfg;
  }
  if (scheduler !== LOCAL_CWD) return cfg;
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(invocation.io.env)) if (value !== undefined) env[name] = value;
  // With a workspace, the replicas start in the server's copy of it, not here.
  const cwd = cfg?.cwd ?? (hasWorkspace ? undefined : invocation.io.cwd);
  return { ...cfg, ...(cwd === undefined ? {} : { cwd }), env: cfg?.env ?? env };
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
  workspace?: string;
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
  '--workspace',
]);
const CFG_SPELLINGS = ['-cfg', '--scheduler_args', '--scheduler-args'];

/**
 * Rewrites TorchX's `-cfg` (and `--scheduler_args`) to `--cfg` among `txs run`'s own options — never
 * inside the component's arguments, which start at the component name.
 *
 * @example
 * ```ts
 * normalizeRunArgv(['run', '-cfg', 'queue=q', 'utils.echo', '-cfg']); // ['run', '--cfg', 'queue=q', 'utils.echo', '-cfg']
 * normalizeRunArgv(['--endpoint', 'https://api', 'run', '-cfg', 'q=1', 'c']); // '-cfg' → '--cfg'
 * ```
 */
export function normalizeRunArgv(argv: readonly string[]): string[] {
  const result = [...argv];
  // The command is the first word that is not an option given before it (`txs --endpoint URL run …`).
  let commandIndex = 0;
  while (commandIndex < result.length && (result[commandIndex] ?? '').startsWith('-')) {
    commandIndex += RUN_VALUE_OPTIONS.has(result[commandIndex] ?? '') ? 2 : 1;
  }
  if (result[commandIndex] !== 'run') return result;
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
 * Joins a repeated `-cfg` into one literal, as if written comma-separated (so a later value of a key wins),
 * instead of keeping only the last and silently dropping the queue of `-cfg queue=q -cfg job_role_arn=…`.
 * TorchX refuses a repeated `-cfg`, so no TorchX command line means anything else here.
 */
function joinCfg(value: string, previous: string | undefined): string {
  if (previous === undefined || previous.trim() === '') return value;
  return value.trim() === '' ? previous : `${previous},${value}`;
}

/**
 * What a dry run of `--workspace sha256:` says of the archive: where the job fetches it when the server said
 * (a deployed stack's dry run); a local server's dry run does not look.
 */
function heldArchive(fetched: { archive: string; stored: boolean } | undefined): string {
  if (fetched === undefined) return 'an archive the server holds';
  return fetched.stored ? `uploaded; fetched by the job from ${fetched.archive}` : 'not uploaded by you';
}

/** True when the component's arguments ask for help (`--help` before any `--`). */
function wantsHelp(args: readonly string[]): boolean {
  const end = args.indexOf('--');
  return (end < 0 ? args : args.slice(0, end)).includes('--help');
}

/** Adds `run` to `program`. */
export function registerRun(program: Command, invocation: Invocation): void {
  addCommonOptions(
    program
      .command('run')
      .summary('run a component (or an AppDef file) on a scheduler')
      .description(
        'Runs a builtin component with its arguments, or the AppDef in --app. Everything after the component ' +
          'name is passed to the component verbatim, so txs options go before it.',
      )
      .option(
        '-s, --scheduler <name>',
        `scheduler to run on (default: [cli:run] scheduler, ${DEFAULT_SCHEDULER})`,
      )
      .option(
        '--cfg <k=v,...>',
        'run options, e.g. queue=gpu,priority=5 (also -cfg, --scheduler_args; repeatable, a later key wins)',
        joinCfg,
      )
      .option('--app <file>', 'run the AppDef JSON in this file (- for stdin) instead of a component')
      .option('--session <name>', 'session name in the handle (default: torchx)')
      .option('--dryrun', 'print the scheduler request without submitting anything')
      .option('--wait', 'wait for the app to finish; exit 0 only if it SUCCEEDED')
      .option('--log', 'stream the logs of every replica while waiting (implies --wait)')
      .option('--idempotency-key <key>', 'submit at most once for this key (default: a fresh key per run)')
      .option(
        '--workspace <dir>',
        'ship this directory to the job, uploaded once by content ("" for none; sha256:<hash> for an archive ' +
          'the server holds; default: [cli:run] workspace, else the current directory for schedulers that take ' +
          'one, slurm only with job_dir; local_cwd: none)',
      )
      .argument('[component]', 'builtin component, e.g. utils.echo, dist.ddp (see `txs builtins`)')
      .argument('[args...]', 'arguments of the component')
      .passThroughOptions(),
  ).action(async (component: string | undefined, args: string[], options: RunOptions) => {
    invocation.exitCode = await runCommand(invocation, component, args, options);
  });
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
  if (component !== undefined && wantsHelp(args)) {
    // TorchX: `torchx run dist.ddp --help` prints the component's arguments.
    const components = await (await invocation.client(options)).components();
    invocation.out(formatBuiltin(findBuiltin(components, component)));
    return ExitCode.OK;
  }
  const app = options.app === undefined ? undefined : await readAppFile(invocation, options.app);
  const scheduler = options.scheduler ?? config.get('cli:run', 'scheduler') ?? DEFAULT_SCHEDULER;
  const session = options.session ?? config.get('cli:run', 'session');
  const client = await invocation.client(options);

  // `.txsconfig` defaults need the scheduler's declared types (to cast the file's spellings and to let -cfg
  // win per option): one GET /v1/schedulers. A -cfg alone is sent as TorchX's string forms, which the API
  // casts and checks: one request per run.
  const needsRunOpts = config.section(scheduler).length > 0;
  let cfg: RunRequestBody['cfg'];
  if (!needsRunOpts && options.cfg !== undefined && options.cfg.trim() !== '') {
    cfg = literalCfg(options.cfg, scheduler);
  } else if (needsRunOpts) {
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
  // TorchX's choice: --workspace ("" for none), [cli:run] workspace, else the current directory where the
  // scheduler runs an image (docs/workspaces.md).
  const choice = chooseWorkspace({
    scheduler,
    flag: options.workspace,
    configured: config.get('cli:run', 'workspace'),
    cwd: invocation.io.cwd,
    home: invocation.io.homeDir,
    ...(cfg === undefined ? {} : { cfg }),
  });
  const directory = choice === undefined || 'sha256' in choice ? undefined : choice;
  const shipping = directory === undefined ? undefined : await import('./run-workspace.js');
  cfg = await withCallerContext(cfg, scheduler, client, invocation, choice !== undefined);
  const packed =
    shipping === undefined || directory === undefined
      ? undefined
      : await shipping.packChoice(invocation, directory, scheduler);
  const common = {
    scheduler,
    ...(cfg === undefined || Object.keys(cfg).length === 0 ? {} : { cfg }),
    ...(session === undefined ? {} : { session }),
  };
  const body: RunRequestBody =
    app !== undefined ? { ...common, app } : { ...common, component: component ?? '', args };
  // The dry run names the archive too, so the server can show the request that fetches it.
  const sha256 = packed?.sha256 ?? (choice !== undefined && 'sha256' in choice ? choice.sha256 : undefined);
  if (sha256 !== undefined) body.workspace = { sha256 };

  if (options.dryrun) {
    // The dry run shows the archive a run would upload (hash, size, largest files) and where
    // the job fetches it; nothing is uploaded.
    const dryrun = await client.dryrun(body);
    for (const warning of dryrun.warnings ?? []) invocation.warn(warning);
    const workspace =
      packed === undefined
        ? sha256 === undefined
          ? undefined
          : { sha256 }
        : { sha256: packed.sha256, size: packed.size, fileCount: packed.fileCount, largest: packed.largest };
    if (options.json) {
      invocation.json(
        workspace === undefined ? dryrun : { ...dryrun, workspace: { ...dryrun.workspace, ...workspace } },
      );
    } else {
      invocation.out(await formatDryRun(dryrun));
      if (packed !== undefined && shipping !== undefined)
        invocation.out(shipping.describePacked(packed, dryrun.workspace));
      else if (sha256 !== undefined)
        invocation.out(`workspace: ${sha256} (${heldArchive(dryrun.workspace)})`);
    }
    // A run names `sha256:` without uploading anything: it would be refused, so its dry run fails too.
    if (packed === undefined && sha256 !== undefined && dryrun.workspace?.stored === false) {
      throw new UsageError(
        `workspace.sha256: you have not uploaded the workspace archive ${sha256} to ${client.endpoint} (or it expired): a run with it would be refused`,
        'upload it with `txs workspace DIR` (which prints its hash), or run with --workspace DIR',
      );
    }
    return ExitCode.OK;
  }
  if (packed !== undefined && shipping !== undefined)
    await shipping.shipWorkspace(invocation, client, packed, scheduler);

  // node:crypto loads only for a real run (~4 ms of start-up a dry run does not need).
  const idempotencyKey = options.idempotencyKey ?? (await import('node:crypto')).randomUUID();
  const submitted = await client.run(body, idempotencyKey);
  for (const warning of submitted.warnings ?? []) invocation.warn(warning);
  const waiting = options.wait === true || options.log === true;
  // With --json --wait, stdout holds one JSON document: the final app (which carries the handle).
  if (options.json && !waiting) invocation.json(submitted);
  else if (!options.json) invocation.out(submitted.handle);
  if (!waiting) {
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
