/**
 * `txs workspace [DIR]`: packs a directory into its workspace archive and uploads it unless the server holds
 * it already, printing the archive's SHA-256 (with `--json`: `{sha256, size, fileCount, uploaded}`). The
 * TorchX plugin calls it to ship `torchx run`'s workspace; a script can call it and put the hash in a run
 * request's `workspace.sha256`. Packing and uploading are `txs run`'s own (`run-workspace.ts`).
 *
 * @module
 */
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { displayText } from '../../specs/names.js';
import { ExitCode } from '../errors.js';
import { addCommonOptions, type CommonOptions, type Invocation } from '../invocation.js';
import { checkTakesWorkspace } from '../workspace/choice.js';

interface WorkspaceOptions extends CommonOptions {
  dryrun?: boolean;
  scheduler?: string;
}

/** Adds `workspace` to `program`. */
export function registerWorkspace(program: Command, invocation: Invocation): void {
  addCommonOptions(
    program
      .command('workspace')
      .summary('pack a directory into a workspace archive and upload it; print its SHA-256')
      .description(
        'Packs DIR (default: the current directory) as `txs run` packs a workspace and uploads it unless the ' +
          'server holds it already. Prints the SHA-256, for `txs run --workspace sha256:<hash>` or a run ' +
          "request's workspace.sha256 (--json: {sha256, size, fileCount, uploaded}). With --dryrun, packs and " +
          'prints the largest files; uploads nothing. With -s, names the scheduler of the run it is for, so a ' +
          'server whose jobs on it cannot fetch the archive refuses it before anything is uploaded.',
      )
      .option(
        '-s, --scheduler <name>',
        'the scheduler of the run it is for: refused before packing if it takes no workspace, and before uploading if the server cannot ship it there',
      )
      .option('--dryrun', 'pack and describe the archive; upload nothing')
      .argument('[dir]', 'the directory to pack (default: the current directory)'),
  ).action(async (dir: string | undefined, options: WorkspaceOptions) => {
    const { scheduler } = options;
    if (scheduler !== undefined) {
      checkTakesWorkspace(
        scheduler,
        `txs workspace -s ${displayText(scheduler)}`,
        'leave out -s, or name a scheduler that takes one',
      );
    }
    const shipping = await import('./run-workspace.js');
    const root = resolve(invocation.io.cwd, dir ?? '.');
    const packed = await shipping.packChoice(invocation, { dir: root, source: 'flag' });
    const summary = { sha256: packed.sha256, size: packed.size, fileCount: packed.fileCount };
    if (options.dryrun) {
      if (options.json) invocation.json({ ...summary, uploaded: false, largest: packed.largest });
      else invocation.out(shipping.describePacked(packed));
    } else {
      const client = await invocation.client(options);
      const uploaded = await shipping.shipWorkspace(invocation, client, packed, scheduler);
      if (options.json) invocation.json({ ...summary, uploaded });
      else invocation.out(packed.sha256);
    }
    invocation.exitCode = ExitCode.OK;
  });
}
