/**
 * The error a workspace that cannot be packed raises: a missing or unreadable path, a symlink leaving the
 * tree, a tree over the size limit, a file that changed while it was packed, or an unusable cache.
 *
 * @module
 */
import { UsageError } from '../errors.js';

/** What is wrong with the workspace; tests and callers branch on it, people read the message. */
export type WorkspaceProblem =
  | 'missing'
  | 'not-a-directory'
  | 'unreadable'
  | 'symlink-outside'
  | 'too-large'
  | 'changed'
  | 'cache';

/** Thrown when a workspace cannot be packed; the message names the path, the hint says how to fix it. Exit 2. */
export class WorkspaceError extends UsageError {
  constructor(
    readonly problem: WorkspaceProblem,
    message: string,
    hint: string,
    /** The workspace-relative path at fault, when there is one. */
    readonly path?: string,
    options: { cause?: unknown } = {},
  ) {
    super(message, hint, options);
  }
}

/** The hint shared by the errors a single entry can cause: leave it out. */
export function ignoreHint(rel: string): string {
  return `fix it, or leave it out of the workspace: add the line \`${rel}\` to .torchxignore`;
}

/** The error for a file that is not what the walk saw by the time it is read (written to, replaced, removed). */
export function changedError(rel: string): WorkspaceError {
  return new WorkspaceError(
    'changed',
    `${rel} changed while the workspace was being packed`,
    'run the command again once the file is no longer being written',
    rel,
  );
}
