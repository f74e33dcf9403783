/**
 * A run request's workspace (`workspace: {sha256}`). The local server unpacks a fresh copy of the archive
 * for the run, and the replicas start there (`cfg.cwd`); a deployed stack resolves it to the caller's archive
 * in its workspace bucket (`workspace-bucket.ts`), which the job fetches.
 *
 * @module
 */
import { createHash, randomUUID } from 'node:crypto';
import {
  type JobWorkspace,
  type RunRequest,
  ValidationError,
  WORKSPACE_SCHEDULERS,
} from '../../lib/specs/index.js';
import { localModeHooks } from './container.js';
import type { WorkspaceBucket } from './workspace-bucket.js';

/**
 * `request` with its workspace unpacked and set as the replicas' working directory, and the workspace to
 * record; `request` itself when it names none. A retry with the same Idempotency-Key gets the same copy (so
 * the same request, as the key's check requires).
 *
 * @throws ValidationError (nothing recorded) when the scheduler cannot take a workspace, this server keeps
 *   no workspaces, `cfg.cwd` is given too, or the archive is unknown or unsafe.
 */
export async function withWorkspace(
  request: RunRequest,
  owner: string,
  idempotencyKey: string | undefined,
): Promise<{ request: RunRequest; workspace?: JobWorkspace }> {
  const ref = request.workspace;
  if (ref === undefined) return { request };
  checkWorkspaceScheduler(request.scheduler);
  const archives = localModeHooks().workspaces;
  if (archives === undefined) {
    return { request, workspace: await (await requireBucket()).resolve(owner, ref.sha256) };
  }
  const cwd = request.cfg.cwd;
  if (cwd !== undefined && cwd !== null) {
    throw ValidationError.forField(
      'cfg.cwd',
      'the replicas start in the workspace; give either cfg.cwd or a workspace, not both',
    );
  }
  const runKey =
    idempotencyKey === undefined
      ? randomUUID()
      : `${createHash('sha256').update(`${owner}\n${idempotencyKey}`).digest('hex').slice(0, 32)}-${ref.sha256.slice(0, 16)}`;
  const { dir, ...workspace } = await archives.prepare(ref.sha256, runKey);
  return { request: { ...request, cfg: { ...request.cfg, cwd: dir } }, workspace };
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
