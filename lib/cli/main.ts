/**
 * Entry point of the `txs` CLI (`bin/txs.js` loads it through tsx): runs the command line of this process
 * and sets the exit code.
 *
 * @module
 */
import { processIO } from './io.js';
import { main } from './program.js';

export { ExitCode } from './errors.js';
export { main } from './program.js';

/** Runs `txs` with this process's arguments and sets `process.exitCode`. */
export async function runProcess(): Promise<void> {
  process.exitCode = await main(process.argv.slice(2), processIO());
}
