/**
 * The deployed stack's workspace archives, in its S3 bucket: each owner's archives under a prefix of their
 * own, derived here from the authenticated owner (`workspaces/<32 hex of SHA-256(owner)>/<sha256>.tar.gz`),
 * so no request can name another owner's archive, learn whether one exists, or run with it. Uploads go
 * straight to S3 through presigned PUT URLs whose signature covers the length and the SHA-256 checksum
 * header: S3 refuses any other bytes, so a stored object is always the archive its key names.
 *
 * The workspaces route uses it on every call; runs and dry runs load it only for a request that names a
 * workspace (the S3 client and presigner are not part of their cold starts).
 *
 * @module
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import {
  HeadObjectCommand,
  type HeadObjectCommandOutput,
  PutObjectCommand,
  type PutObjectCommandInput,
  S3Client,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { BackendAccessDeniedError, BackendError } from '../../lib/schedulers/errors.js';
import {
  awsErrorName,
  awsErrorStatus,
  isAccessDeniedError,
  isRetryableAwsError,
  type JobWorkspace,
  retry,
  ValidationError,
  type WorkspaceOffer,
  type WorkspaceOfferResponse,
  type WorkspaceSummary,
} from '../../lib/specs/index.js';
import { config, created, onForget } from '../shared/container.js';
import { WORKSPACE_KEY_PREFIX } from '../shared/env-names.js';

/** The object metadata that carries an archive's regular file count (`x-amz-meta-file-count`). */
export const FILE_COUNT_METADATA = 'file-count';

/** How long an upload URL works, in seconds: time enough to start sending a large archive. */
export const UPLOAD_URL_SECONDS = 15 * 60;

const DAY_MS = 24 * 60 * 60 * 1000;

/** Attempts of a copy's PutObject that S3 failed transiently (throttling, 5xx, a dropped connection). */
const PUT_RETRIES = { maxAttempts: 3, baseMs: 200, capMs: 2_000 } as const;

/**
 * The prefix of `owner`'s archives: a hash, so the key holds no ARN and no owner can choose a prefix
 * (owners are the server's, from the caller's authenticated identity).
 */
export function ownerPrefix(owner: string): string {
  return `${WORKSPACE_KEY_PREFIX}${createHash('sha256').update(owner).digest('hex').slice(0, 32)}/`;
}

/** The key of `owner`'s archive `sha256`. */
export function archiveKey(owner: string, sha256: string): string {
  return `${ownerPrefix(owner)}${sha256}.tar.gz`;
}

/** An archive the bucket holds. */
interface StoredArchive {
  readonly size: number;
  readonly fileCount: number;
  /** When it was written (S3's Last-Modified): the lifecycle rule expires it that many days after. */
  readonly storedAt: number;
}

/** The workspace archives of one bucket. */
export class WorkspaceBucket {
  constructor(
    private readonly client: S3Client,
    readonly bucket: string,
    /** Days the bucket's lifecycle rule keeps an archive. */
    readonly days: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Where a job fetches `owner`'s archive `sha256` from. */
  uri(owner: string, sha256: string): string {
    return `s3://${this.bucket}/${archiveKey(owner, sha256)}`;
  }

  /**
   * `owner`'s archive `sha256` when the bucket holds it and it is fresh: written less than half the
   * lifecycle's days ago, so that a job queued now still finds it when it starts. An older one is treated
   * as absent: the client uploads it again, which renews it.
   */
  private async find(owner: string, sha256: string): Promise<StoredArchive | undefined> {
    const key = archiveKey(owner, sha256);
    let answer: HeadObjectCommandOutput;
    try {
      answer = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
    } catch (error) {
      if (awsErrorName(error) === 'NotFound' || awsErrorStatus(error) === 404) return undefined;
      throw backendError(error, 's3:GetObject', `workspace archive ${sha256}`);
    }
    const storedAt = answer.LastModified?.getTime() ?? 0;
    if (this.now() - storedAt >= (this.days * DAY_MS) / 2) return undefined;
    const fileCount = Number(answer.Metadata?.[FILE_COUNT_METADATA] ?? 0);
    return {
      size: answer.ContentLength ?? 0,
      fileCount: Number.isSafeInteger(fileCount) && fileCount >= 0 ? fileCount : 0,
      storedAt,
    };
  }

  /**
   * `POST /v1/workspaces`: `stored: true` when the owner's archive is in the bucket (and fresh), else a
   * presigned PUT for exactly these bytes: the signature covers `Content-Length` and
   * `x-amz-checksum-sha256`, so S3 refuses a body of another length or hash (and nothing is stored).
   */
  async offer(owner: string, offer: WorkspaceOffer): Promise<WorkspaceOfferResponse> {
    if ((await this.find(owner, offer.sha256)) !== undefined) return { sha256: offer.sha256, stored: true };
    const put = this.putOf(owner, offer);
    const headers = {
      'content-length': String(offer.size),
      'x-amz-checksum-sha256': put.ChecksumSHA256,
      [`x-amz-meta-${FILE_COUNT_METADATA}`]: String(offer.fileCount),
    };
    const signedAt = this.now();
    const url = await getSignedUrl(this.client, new PutObjectCommand(put), {
      expiresIn: UPLOAD_URL_SECONDS,
      signingDate: new Date(signedAt),
      // Signed, and sent as headers (not moved into the query string), so S3 checks them on the PUT.
      signableHeaders: new Set(Object.keys(headers)),
      unhoistableHeaders: new Set(Object.keys(headers)),
    });
    return {
      sha256: offer.sha256,
      stored: false,
      upload: {
        method: 'PUT',
        url,
        headers,
        expiresAt: new Date(signedAt + UPLOAD_URL_SECONDS * 1000).toISOString(),
      },
    };
  }

  /**
   * The PutObject of `owner`'s archive (without its body): its key, and the length, SHA-256 (S3 refuses
   * other bytes, storing nothing) and file count it must have.
   */
  private putOf(
    owner: string,
    { sha256, size, fileCount }: WorkspaceSummary,
  ): PutObjectCommandInput & { ChecksumSHA256: string } {
    return {
      Bucket: this.bucket,
      Key: archiveKey(owner, sha256),
      ContentLength: size,
      ChecksumSHA256: Buffer.from(sha256, 'hex').toString('base64'),
      Metadata: { [FILE_COUNT_METADATA]: String(fileCount) },
    };
  }

  /**
   * The local server's run: its stored archive `local` (a file on its machine) copied to `owner`'s key in
   * this bucket, unless the bucket holds it already (and fresh: an older copy is written again, which renews
   * it), as the workspace the job fetches. The PutObject is pinned to the archive's SHA-256, so S3 stores
   * these bytes or nothing.
   *
   * @throws BackendAccessDeniedError when the server's credentials may not read or write the owner's key;
   *   BackendError when S3 fails otherwise.
   */
  async copyIn(owner: string, local: JobWorkspace): Promise<JobWorkspace> {
    const { sha256, size, fileCount } = local;
    if ((await this.find(owner, sha256)) === undefined) {
      const put = this.putOf(owner, local);
      // The SDK does not retry a request whose body is a stream (it cannot rewind it): each attempt here
      // opens the file again.
      const send = async () => {
        const body = createReadStream(local.archive);
        try {
          await this.client.send(new PutObjectCommand({ ...put, Body: body }));
        } finally {
          body.destroy();
        }
      };
      try {
        await retry(send, { ...PUT_RETRIES, isRetryable: isRetryableAwsError });
      } catch (error) {
        throw backendError(error, 's3:PutObject', `workspace archive ${sha256}`);
      }
    }
    return { sha256, size, fileCount, archive: this.uri(owner, sha256) };
  }

  /**
   * A run's workspace: `owner`'s archive `sha256`, proven in the bucket.
   *
   * @throws ValidationError naming `workspace.sha256` (nothing recorded) when the owner has not uploaded it,
   *   or uploaded it so long ago that it may expire before the job starts.
   */
  async resolve(owner: string, sha256: string): Promise<JobWorkspace> {
    const stored = await this.find(owner, sha256);
    if (stored === undefined) {
      throw ValidationError.forField(
        'workspace.sha256',
        `no workspace archive ${sha256} uploaded by you in the last ${this.days / 2} days; upload it first: POST /v1/workspaces with {sha256, size, fileCount}, then PUT the archive to the URL it answers (txs run --workspace does both)`,
      );
    }
    return { sha256, size: stored.size, fileCount: stored.fileCount, archive: this.uri(owner, sha256) };
  }

  /** A dry run's workspace: where the job would fetch it, and whether the owner has uploaded it yet. */
  async describe(owner: string, sha256: string): Promise<JobWorkspace & { stored: boolean }> {
    const stored = await this.find(owner, sha256);
    return {
      sha256,
      size: stored?.size ?? 0,
      fileCount: stored?.fileCount ?? 0,
      archive: this.uri(owner, sha256),
      stored: stored !== undefined,
    };
  }
}

function backendError(error: unknown, action: string, target: string): Error {
  if (isAccessDeniedError(error)) {
    return new BackendAccessDeniedError(
      `Access denied to ${action} (and s3:ListBucket) for ${target}: grant them on the workspace bucket's ${WORKSPACE_KEY_PREFIX} prefix`,
      { cause: error },
    );
  }
  return new BackendError(`S3 failed for ${target}`, isRetryableAwsError(error), { cause: error });
}

let built: WorkspaceBucket | undefined;
onForget(() => {
  built = undefined;
});

/**
 * The function's workspace bucket, its client created on first use; undefined when the function has none
 * (`TXS_WORKSPACE_BUCKET` unset: the stack's functions without one, or a local server without one).
 */
export function workspaceBucket(): WorkspaceBucket | undefined {
  const { workspaceBucket: bucket, workspaceDays } = config();
  if (bucket === undefined) return undefined;
  built ??= new WorkspaceBucket(created(new S3Client({})), bucket, workspaceDays);
  return built;
}

/**
 * The stack's workspace bucket.
 *
 * @throws ValidationError naming `workspace` when this deployment keeps no workspaces.
 */
export function requireWorkspaceBucket(): WorkspaceBucket {
  const bucket = workspaceBucket();
  if (bucket === undefined) {
    throw ValidationError.forField(
      'workspace',
      'this deployment has no workspace bucket (the stack creates one with the aws_batch or aws_sagemaker scheduler); run without one (txs run --workspace "")',
    );
  }
  return bucket;
}
