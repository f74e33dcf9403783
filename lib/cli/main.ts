/**
 * Entry point of the `txs` CLI (`bin/txs.js` loads it, compiled in `dist/cli/main.js` or through tsx): runs the command line of this process
 * and sets the exit code.
 *
 * @module
 */
import { processIO } from './io.js';
import { main } from './program.js';
import { terminalIO } from './terminal-text.js';

export { ExitCode } from './errors.js';
export { main } from './program.js';

/**
 * Exits quietly when the reader of stdout goes away (`txs list | head`): the rest of the output has nowhere
 * to go, which is not an error of the command. Any other stream error is rethrown.
 */
export function exitQuietlyOnClosedStdout(stream: NodeJS.WriteStream = process.stdout): void {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    process.exit(process.exitCode ?? 0);
  });
}

/**
 * Runs `txs` with this process's arguments and sets `process.exitCode`. Everything it prints goes through
 * `terminalIO` (control and format characters escaped; see terminal-text.ts).
 */
export async function runProcess(): Promise<void> {
  exitQuietlyOnClosedStdout();
  process.exitCode = await main(process.argv.slice(2), terminalIO(processIO()));
}
