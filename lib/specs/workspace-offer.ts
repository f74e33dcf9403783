/**
 * The body of `POST /v1/workspaces` (the archive a caller is about to run with) and a run request's
 * reference to it, apart from the AppDef schemas: the workspaces route builds only these.
 *
 * @module
 */
import * as z from 'zod/mini';
import { failWith, name, toFieldIssues } from './schema-fields.js';
import { WORKSPACE_SHA256_PATTERN } from './workspaces.js';

/**
 * The largest workspace archive accepted (bytes): the client's 500 MiB content limit, compressed, with room
 * for headers. A single S3 PUT takes up to 5 GB, so one presigned URL carries any archive under it.
 */
export const MAX_WORKSPACE_ARCHIVE_BYTES = 600 * 1024 * 1024;

const workspaceSha256 = z
  .string()
  .check(
    z.regex(WORKSPACE_SHA256_PATTERN, 'must be the SHA-256 of the uploaded archive: 64 lowercase hex digits'),
  );

/** A run request's workspace: the archive stored through `POST /v1/workspaces`, named by its hash. */
export const workspaceRefSchema = z.strictObject({ sha256: workspaceSha256 });

/**
 * Body of `POST /v1/workspaces`: the archive the caller is about to run with, which the server either holds
 * already or answers an upload for, pinned to exactly this hash and length.
 */
export const workspaceOfferSchema = z.strictObject({
  sha256: workspaceSha256,
  size: z
    .int()
    .check(
      z.minimum(1, 'must be the archive’s length in bytes (at least 1)'),
      z.maximum(
        MAX_WORKSPACE_ARCHIVE_BYTES,
        `must be at most ${MAX_WORKSPACE_ARCHIVE_BYTES} bytes (600 MiB); leave large files out with .torchxignore`,
      ),
    ),
  fileCount: z.int().check(z.minimum(0, 'must be the number of regular files in the archive (0 or more)')),
  /**
   * The scheduler the caller will run with, when it knows: the server refuses an archive that run could not
   * use before anything is uploaded (e.g. the local server without a workspace bucket, for aws_batch).
   */
  scheduler: z.optional(name),
});

/** A validated `POST /v1/workspaces` body. */
export type WorkspaceOffer = z.output<typeof workspaceOfferSchema>;

/**
 * Validates a `POST /v1/workspaces` body: `{sha256, size, fileCount}`.
 *
 * @throws ValidationError naming each bad field.
 */
export function parseWorkspaceOffer(input: unknown): WorkspaceOffer {
  const result = z.safeParse(workspaceOfferSchema, input, { reportInput: true });
  if (!result.success) failWith(toFieldIssues(result.error.issues, ''), 'workspace');
  return result.data;
}
