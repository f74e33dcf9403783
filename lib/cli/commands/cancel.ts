/**
 * `txs cancel HANDLE` (TorchX `cmd_cancel`).
 *
 * @module
 */
import type { Command } from 'commander';
import { isTerminal } from '../../specs/app-state.js';
import { displayText } from '../../specs/names.js';
import { addCommonOptions, type CommonOptions, type Invocation } from '../invocation.js';

/** Adds `cancel` to `program`. */
export function registerCancel(program: Command, invocation: Invocation): void {
  addCommonOptions(
    program.command('cancel').summary('cancel an app (idempotent)').argument('<handle>', 'app handle'),
  ).action(async (handle: string, options: CommonOptions) => {
    const client = await invocation.client(options);
    const answer = await client.cancel(handle);
    if (options.json) invocation.json(answer);
    else if (isTerminal(answer.state) && answer.cancelRequestedAt === undefined) {
      invocation.out(
        `${displayText(answer.handle)} had already finished (state: ${displayText(answer.state)}); nothing to cancel`,
      );
    } else
      invocation.out(
        `cancel requested for ${displayText(answer.handle)} (state: ${displayText(answer.state)})`,
      );
  });
}
