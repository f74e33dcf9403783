/**
 * A run request's workspace (`workspace: {sha256}`). The local server resolves it to its stored archive,
 * which local_cwd unpacks into the run's own directory as the app starts (off the request's path) and the
 * other local-archive schedulers use as they are; a deployed stack resolves it to the caller's archive in its
 * workspace bucket (`workspace-bucket.ts`), which the job fetches.
 *
 * @module
 */
import {
  type JobWorkspace,
  type RunRequest,
  ValidationError,
  WORKSPACE_SCHEDULERS,
} from '../../lib/specs/index.js';
import { localModeHooks } from './container.js';
import type { WorkspaceBucket } from './workspace-bucket.js';

/**
 * The workspace `request` names, resolved to where its archive is (undefined when it names none).
 *
 * @throws ValidationError (nothing recorded) when the scheduler cannot take a workspace, this server keeps
 *   no workspaces, or the archive is unknown.
 */
export async function withWorkspace(
  request: RunRequest,
  owner: string,
): Promise<{ workspace?: JobWorkspace }> {
  const ref = request.workspace;
  if (ref === undefined) return {};
  checkWorkspaceScheduler(request.scheduler);
  const archives = localModeHooks().workspaces;
  // The local server: its stored archive, marked as used (local_cwd makes the run's copy as the app starts).
  if (archives !== undefined) return { workspace: archives.resolve(ref.sha256) };
  return { workspace: await (await requireBucket()).resolve(owner, ref.sha256) };
}

/**
 * A dry run's workspace: in a deployed stack, where the job would fetch the caller's archive and whether it
 * is uploaded yet (the dry run shows the request that fetches it). Undefined when the request names none, and
 * on the local server, whose run unpacks its own copy (the dry run shows no copy).
 *
 * @throws ValidationError (as a run) when the scheduler cannot take a workspace or the server keeps none.
 */
export async function dryrunWorkspace(
  request: RunRequest,
  owner: string,
): Promise<(JobWorkspace & { stored: boolean }) | undefined> {
  const ref = request.workspace;
  if (ref === undefined) return undefined;
  checkWorkspaceScheduler(request.scheduler);
  if (localModeHooks().workspaces !== undefined) return undefined;
  return (await requireBucket()).describe(owner, ref.sha256);
}

function checkWorkspaceScheduler(scheduler: string): void {
  if (!WORKSPACE_SCHEDULERS.includes(scheduler)) {
    throw ValidationError.forField(
      'workspace',
      `the ${scheduler} scheduler cannot take a workspace yet (only ${WORKSPACE_SCHEDULERS.join(', ')} can); run without one (txs run --workspace "")`,
    );
  }
}

/**
 * The stack's workspace bucket (its module loaded only now).
 *
 * @throws ValidationError naming `workspace` when this server keeps no workspaces.
 */
export async function requireBucket(): Promise<WorkspaceBucket> {
  const bucket = (await import('./workspace-bucket.js')).workspaceBucket();
  if (bucket === undefined) {
    throw ValidationError.forField(
      'workspace',
      'this deployment has no workspace bucket (the stack creates one with the aws_batch or aws_sagemaker scheduler); run without one (txs run --workspace "")',
    );
  }
  return bucket;
}
