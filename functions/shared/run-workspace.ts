/**
 * A run request's workspace (`workspace: {sha256}`): only local_cwd on the local server takes one yet. The
 * local server resolves the reference to its stored archive; local_cwd unpacks it into the run's own
 * directory as the app starts, off the request's path.
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

/**
 * The workspace `request` names, resolved to where its archive is (undefined when it names none).
 *
 * @throws ValidationError (nothing recorded) when the scheduler cannot take a workspace, this server keeps
 *   no workspaces, or the archive is unknown.
 */
export async function withWorkspace(request: RunRequest): Promise<{ workspace?: JobWorkspace }> {
  const ref = request.workspace;
  if (ref === undefined) return {};
  if (!WORKSPACE_SCHEDULERS.includes(request.scheduler)) {
    throw ValidationError.forField(
      'workspace',
      `the ${request.scheduler} scheduler cannot take a workspace yet (only ${WORKSPACE_SCHEDULERS.join(', ')} on the local server can); run without one (txs run --workspace "")`,
    );
  }
  return { workspace: localWorkspace(ref) };
}

/** The local server's stored archive for `ref`. */
function localWorkspace(ref: { sha256: string }): JobWorkspace {
  const archives = localModeHooks().workspaces;
  if (archives === undefined) {
    throw ValidationError.forField(
      'workspace',
      'this server does not keep workspaces yet (only the local server does); run without one (txs run --workspace "")',
    );
  }
  return archives.resolve(ref.sha256);
}
