/**
 * `txs describe HANDLE`: the AppDef of an app (TorchX `cmd_describe`).
 *
 * @module
 */
import type { Command } from 'commander';
import { formatWorkspaceLine, formatYaml } from '../format.js';
import { addCommonOptions, type CommonOptions, type Invocation } from '../invocation.js';

/** Adds `describe` to `program`. */
export function registerDescribe(program: Command, invocation: Invocation): void {
  addCommonOptions(
    program.command('describe').summary('print the AppDef of an app').argument('<handle>', 'app handle'),
  ).action(async (handle: string, options: CommonOptions) => {
    const client = await invocation.client(options);
    const app = await client.getApp(handle);
    if (options.json) invocation.json(app);
    else {
      invocation.out(await formatYaml(app.app));
      // A YAML comment: the output stays the AppDef that `txs run --app` reads back.
      if (app.workspace) invocation.out(`# ${formatWorkspaceLine(app.workspace)}`);
    }
  });
}
