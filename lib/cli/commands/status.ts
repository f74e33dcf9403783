/**
 * `txs status HANDLE`: the state of an app and of its replicas (TorchX `cmd_status`).
 *
 * @module
 */
import type { Command } from 'commander';
import { formatStatus, formatWorkspaceLine } from '../format.js';
import { addCommonOptions, type CommonOptions, type Invocation } from '../invocation.js';

/** Adds `status` to `program`. */
export function registerStatus(program: Command, invocation: Invocation): void {
  addCommonOptions(
    program
      .command('status')
      .summary('print the status of an app')
      .argument('<handle>', 'app handle, e.g. local_cwd://torchx/echo-k3x9')
      .option('--roles <names>', 'only these roles (comma-separated)')
      .option('--refresh', 'ask the scheduler now instead of reading the last recorded state'),
  ).action(async (handle: string, options: CommonOptions & { roles?: string; refresh?: boolean }) => {
    const client = await invocation.client(options);
    const app = await client.getApp(handle, { refresh: options.refresh === true });
    if (options.json) invocation.json(app);
    else {
      const roles = options.roles
        ?.split(',')
        .map((r) => r.trim())
        .filter((r) => r !== '');
      invocation.out(formatStatus(app, roles));
      if (app.workspace) invocation.out(formatWorkspaceLine(app.workspace));
    }
  });
}
