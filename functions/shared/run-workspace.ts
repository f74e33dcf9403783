/**
 * A run request's workspace (`workspace: {sha256}`): only local_cwd on the local server takes one yet. The
 * local server unpacks a fresh copy of the archive for the run, and the replicas start there (`cfg.cwd`).
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
  if (!WORKSPACE_SCHEDULERS.includes(request.scheduler)) {
    throw ValidationError.forField(
      'workspace',
      `the ${request.scheduler} scheduler cannot take a workspace yet (only ${WORKSPACE_SCHEDULERS.join(', ')} on the local server can); run without one (txs run --workspace "")`,
    );
  }
  const archives = localModeHooks().workspaces;
  if (archives === undefined) {
    throw ValidationError.forField(
      'workspace',
      'this server does not keep workspaces yet (only the local server does); run without one (txs run --workspace "")',
    );
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
