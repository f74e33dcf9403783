/**
 * Entry point of the `txs` CLI (`bin/txs.js` loads it through tsx): runs the command line of this process
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
 * Runs `txs` with this process's arguments and sets `process.exitCode`. Everything it prints goes through
 * `terminalIO` (control and format characters escaped; see terminal-text.ts).
 */
export async function runProcess(): Promise<void> {
  process.exitCode = await main(process.argv.slice(2), terminalIO(processIO()));
}
