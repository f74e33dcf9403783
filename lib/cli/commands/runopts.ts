/**
 * `txs runopts [SCHEDULER]`: the run options of the schedulers (TorchX `cmd_runopts`).
 *
 * @module
 */
import type { Command } from 'commander';
import { UsageError } from '../errors.js';
import { formatRunOpts } from '../format.js';
import { addCommonOptions, type CommonOptions, type Invocation } from '../invocation.js';

/** Adds `runopts` to `program`. */
export function registerRunopts(program: Command, invocation: Invocation): void {
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
    else invocation.out(formatRunOpts(schedulers, invocation.paint(invocation.io.stdout)));
  });
}
