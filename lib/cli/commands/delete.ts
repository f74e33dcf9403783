/**
 * `txs delete HANDLE` (TorchX `cmd_delete`).
 *
 * @module
 */
import type { Command } from 'commander';
import { displayText } from '../../specs/names.js';
import { addCommonOptions, type CommonOptions, type Invocation } from '../invocation.js';

/** Adds `delete` to `program`. */
export function registerDelete(program: Command, invocation: Invocation): void {
  addCommonOptions(
    program
      .command('delete')
      .summary("cancel an app if it runs and remove it from the scheduler's data plane")
      .argument('<handle>', 'app handle'),
  ).action(async (handle: string, options: CommonOptions) => {
    const client = await invocation.client(options);
    const answer = await client.delete(handle);
    if (options.json) invocation.json(answer);
    else
      invocation.out(
        `delete requested for ${displayText(answer.handle)} (state: ${displayText(answer.state)})`,
      );
  });
}
