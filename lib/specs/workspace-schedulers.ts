/**
 * The one list of schedulers that take a workspace. Its own module, without zod, because `txs run` reads it
 * at start-up to choose its default workspace (the CLI loads no schema module before it needs one).
 *
 * @module
 */

/** The schedulers that take a workspace today (local_cwd, on the local server: docs/workspaces.md). */
export const WORKSPACE_SCHEDULERS: readonly string[] = ['local_cwd'];
