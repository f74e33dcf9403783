/**
 * The `txs` command line: TorchX's commands (`run`, `status`, `describe`, `log`, `list`, `cancel`,
 * `delete`, `runopts`, `builtins`, plus `wait`) over the HTTP API, assembled with commander. Each command
 * lives in `commands/` (as TorchX's `cmd_*.py`).
 *
 * @module
 */
import { Command, CommanderError } from 'commander';
import { displayText } from '../specs/names.js';
import { registerBuiltins } from './commands/builtins.js';
import { registerCancel } from './commands/cancel.js';
import { registerDelete } from './commands/delete.js';
import { registerDescribe } from './commands/describe.js';
import { registerList } from './commands/list.js';
import { registerLog } from './commands/log.js';
import { normalizeRunArgv, registerRun } from './commands/run.js';
import { registerRunopts } from './commands/runopts.js';
import { registerStatus } from './commands/status.js';
import { registerUi } from './commands/ui.js';
import { registerWait } from './commands/wait.js';
import { registerWorkspace } from './commands/workspace.js';
import { CliError, ExitCode } from './errors.js';
import { addConnectionOptions, type CommonOptions, Invocation, packageVersion } from './invocation.js';
import type { CliIO } from './io.js';

export { DEFAULT_SCHEDULER, normalizeRunArgv } from './commands/run.js';

/** Exit code for an unexpected internal error (a bug in `txs`). */
export const EXIT_INTERNAL = 70;

/**
 * Builds the commander program. Each action stores its exit code in `invocation.exitCode`; errors
 * propagate to {@link main}.
 */
function buildProgram(invocation: Invocation): Command {
  const { io } = invocation;
  const program = new Command('txs');
  program
    .description(
      'torchx-serverless: launch, watch and manage TorchX-style apps over the HTTP API ' +
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
        '\nExit codes: 0 ok, 1 app did not succeed (--wait), 2 usage, 3 unknown app, 4 auth, 5 endpoint unavailable (retry),\n78 the server must be configured first (retrying cannot help).',
    );
  addConnectionOptions(program);
  invocation.givenBeforeCommand = () => program.opts<CommonOptions>();
  registerRun(program, invocation);
  registerStatus(program, invocation);
  registerDescribe(program, invocation);
  registerLog(program, invocation);
  registerList(program, invocation);
  registerCancel(program, invocation);
  registerDelete(program, invocation);
  registerWait(program, invocation);
  registerUi(program, invocation);
  registerRunopts(program, invocation);
  registerBuiltins(program, invocation);
  registerWorkspace(program, invocation);
  return program;
}

/** Prints an error as `error: …` and `hint: …` lines (a server's words escaped: {@link displayText}). */
function reportError(invocation: Invocation, error: CliError): void {
  invocation.err(`error: ${displayText(error.message, 'block')}`);
  const shown = new Set([error.message]);
  for (const issue of error.issues) {
    const line = `${issue.path}: ${issue.message}`;
    if (!error.message.includes(issue.message) && !shown.has(line)) {
      invocation.err(`  ${displayText(line, 'block')}`);
      shown.add(line);
    }
  }
  if (error.hint !== undefined) invocation.err(`hint: ${displayText(error.hint, 'block')}`);
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
    invocation.err(`error: internal error in txs: ${displayText(message, 'block')}`);
    if (io.env.TXS_DEBUG && error instanceof Error && error.stack) invocation.err(error.stack);
    invocation.err('hint: this is a bug; rerun with TXS_DEBUG=1 for a stack trace and report it');
    return EXIT_INTERNAL;
  }
}
