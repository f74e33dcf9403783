/**
 * `txs builtins [COMPONENT]`: the builtin components, or one component's arguments (TorchX
 * `cmd_builtins`).
 *
 * @module
 */
import type { Command } from 'commander';
import { UsageError } from '../errors.js';
import { formatBuiltin, formatBuiltinList } from '../format.js';
import { addCommonOptions, type CommonOptions, type Invocation } from '../invocation.js';

/** Adds `builtins` to `program`. */
export function registerBuiltins(program: Command, invocation: Invocation): void {
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
}
