/**
 * `txs builtins [COMPONENT]`: the builtin components, or one component's arguments (TorchX
 * `cmd_builtins`).
 *
 * @module
 */
import type { Command } from 'commander';
import { suggestNames } from '../../specs/suggest.js';
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
    const component = findBuiltin(components, name);
    if (options.json) invocation.json(component);
    else invocation.out(formatBuiltin(component));
  });
}

/**
 * The builtin named `name`.
 *
 * @throws UsageError with the closest names ("did you mean utils.echo?") and the list of builtins.
 */
export function findBuiltin<T extends { name: string }>(components: readonly T[], name: string): T {
  const component = components.find((c) => c.name === name);
  if (component !== undefined) return component;
  const names = components.map((c) => c.name);
  const close = suggestNames(name, names);
  throw new UsageError(
    `no builtin component ${name}${close.length > 0 ? `; did you mean ${close.join(' or ')}?` : ''}`,
    `builtins: ${names.join(', ')}`,
  );
}
