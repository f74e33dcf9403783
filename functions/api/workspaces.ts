/**
 * `POST /v1/workspaces`: before a run with a workspace, the client names the archive (`{sha256, size,
 * fileCount}`); the answer is `stored: true` when the server holds it for the caller (nothing to send), else
 * where to `PUT` it: a presigned S3 URL pinned to its length and checksum (deployed stack), or the local
 * server's own `PUT /v1/workspaces/{sha256}`. An offer naming its `scheduler` is refused (400 naming
 * `workspace`) when a run on it could not use the archive.
 */
import { parseWorkspaceOffer } from '../../lib/specs/index.js';
import { localModeHooks } from '../shared/container.js';
import { apiHandler } from '../shared/middleware.js';
import { requireWorkspaceBucket } from '../workspaces/bucket.js';
import { checkWorkspaceTarget } from '../workspaces/resolve.js';

export const handler = apiHandler({ operation: 'Workspaces', body: true }, async (req) => {
  const offer = parseWorkspaceOffer(req.body);
  // Refused before any byte is sent when the run it is for could not use it.
  if (offer.scheduler !== undefined) await checkWorkspaceTarget(offer.scheduler);
  const local = localModeHooks().workspaces;
  if (local === undefined) {
    return { statusCode: 200, body: await requireWorkspaceBucket().offer(req.owner, offer) };
  }
  const { sha256 } = offer;
  const stored = await local.holds(sha256);
  return {
    statusCode: 200,
    body: stored
      ? { sha256, stored }
      : {
          sha256,
          stored,
          upload: {
            method: 'PUT',
            url: `/v1/workspaces/${sha256}`,
            headers: { 'content-type': 'application/octet-stream', 'content-length': String(offer.size) },
          },
        },
  };
});
