/**
 * A run request's workspace (`workspace: {sha256}`), resolved to where the job fetches its archive, routed on
 * where the scheduler's jobs fetch it from (`WORKSPACE_ARCHIVE_SOURCES`). The local server resolves it to its
 * stored archive, which local_cwd unpacks into the run's own directory as the app starts and local_docker and
 * slurm use as it is; for a scheduler whose jobs fetch from S3 it copies that archive to its workspace bucket
 * (`TXS_WORKSPACE_BUCKET`) first. A deployed stack resolves it to the caller's archive in its workspace bucket
 * (`bucket.ts`).
 *
 * @module
 */
import {
  type JobWorkspace,
  type RunRequest,
  ValidationError,
  WORKSPACE_ARCHIVE_SOURCES,
  WORKSPACE_SCHEDULERS,
} from '../../lib/specs/index.js';
import { localModeHooks } from '../shared/container.js';
import { ENV } from '../shared/env-names.js';
import type { WorkspaceBucket } from './bucket.js';

/**
 * The workspace `request` names, resolved to where its archive is (undefined when it names none).
 *
 * @throws ValidationError (nothing recorded) when the scheduler cannot take a workspace, this server keeps
 *   no workspaces where the scheduler's jobs fetch them, or the archive is unknown; BackendError when the
 *   local server cannot copy it to its bucket.
 */
export async function withWorkspace(
  request: RunRequest,
  owner: string,
): Promise<{ workspace?: JobWorkspace }> {
  const ref = request.workspace;
  if (ref === undefined) return {};
  const source = archiveSource(request.scheduler);
  const archives = localModeHooks().workspaces;
  if (archives === undefined) return { workspace: await (await stackBucket()).resolve(owner, ref.sha256) };
  // The local server: its stored archive, marked as used (local_cwd makes the run's copy as the app starts).
  if (source === 'server') return { workspace: archives.resolve(ref.sha256) };
  const bucket = await requireLocalBucket(request.scheduler);
  return { workspace: await bucket.copyIn(owner, archives.resolve(ref.sha256)) };
}

/**
 * A dry run's workspace: where the job would fetch the archive and whether it is uploaded yet (the dry run
 * shows the request that fetches it). On the local server, its own archive (or, for a scheduler whose jobs
 * fetch from S3, the bucket's key a run would copy it to); a dry run uploads nothing, so it need not be
 * stored. Undefined when the request names none.
 *
 * @throws ValidationError (as a run) when the scheduler cannot take a workspace or the server keeps none
 *   where its jobs fetch them.
 */
export async function dryrunWorkspace(
  request: RunRequest,
  owner: string,
): Promise<(JobWorkspace & { stored: boolean }) | undefined> {
  const ref = request.workspace;
  if (ref === undefined) return undefined;
  const source = archiveSource(request.scheduler);
  const archives = localModeHooks().workspaces;
  if (archives === undefined) return (await stackBucket()).describe(owner, ref.sha256);
  const local = archives.describe(ref.sha256);
  if (source === 'server') return local;
  return { ...local, archive: (await requireLocalBucket(request.scheduler)).uri(owner, ref.sha256) };
}

/**
 * `POST /v1/workspaces` naming the scheduler: refuses an archive a run on it could not use, before it is
 * uploaded.
 *
 * @throws ValidationError naming `workspace` as a run would.
 */
export async function checkWorkspaceTarget(scheduler: string): Promise<void> {
  const source = archiveSource(scheduler);
  if (source === 's3' && localModeHooks().workspaces !== undefined) await requireLocalBucket(scheduler);
}

function archiveSource(scheduler: string): 'server' | 's3' {
  const source = WORKSPACE_ARCHIVE_SOURCES[scheduler];
  if (source === undefined) {
    throw ValidationError.forField(
      'workspace',
      `the ${scheduler} scheduler cannot take a workspace yet (only ${WORKSPACE_SCHEDULERS.join(', ')} can); run without one (txs run --workspace "")`,
    );
  }
  return source;
}

/** The stack's workspace bucket (its module, with the S3 client, loaded only now). */
async function stackBucket(): Promise<WorkspaceBucket> {
  return (await import('./bucket.js')).requireWorkspaceBucket();
}

/**
 * The local server's workspace bucket, for `scheduler`'s jobs, which fetch their workspace from S3.
 *
 * @throws ValidationError naming `workspace`, with the fix, when the server has none.
 */
async function requireLocalBucket(scheduler: string): Promise<WorkspaceBucket> {
  const bucket = (await import('./bucket.js')).workspaceBucket();
  if (bucket !== undefined) return bucket;
  throw ValidationError.forField(
    'workspace',
    `${scheduler} jobs fetch their workspace from S3, and this local server has no workspace bucket: restart it with ${ENV.workspaceBucket} set to an S3 bucket your AWS credentials can write and the job's role can read (docs/workspaces.md#from-the-local-server-to-s3), or run without a workspace (txs run --workspace "")`,
  );
}
