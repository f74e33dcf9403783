/**
 * The deployed stack's workspace path over the real S3 wire, against moto: `POST /v1/workspaces` (the
 * deployed handler, its real S3 client and presigner) answers a presigned PUT, `txs`'s uploader streams the
 * archive to it, and a run's `workspace: {sha256}` resolves through HeadObject to the caller's `s3://`
 * archive with the length and file count S3 stored. Another owner neither sees nor reaches it.
 *
 * Where moto differs from S3: moto 5.2 verifies neither the `x-amz-checksum-sha256` of a PUT against its body
 * (its S3 backend records the header without computing the digest: a TODO in `moto/s3/responses.py`) nor
 * the signature of a presigned URL (with request authentication on, it fails on any request without an
 * `Authorization` header), so moto alone stores a PUT of other bytes or another length. The SDK therefore
 * talks to moto through a gate (s3-gate.ts) that checks presigned PUTs as S3 does: the signature recomputed
 * by botocore from the request as received, and the body's SHA-256 against the pinned header.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import {
  CreateBucketCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configureClients } from '../../functions/shared/container.js';
import { ENV } from '../../functions/shared/env-names.js';
import { archiveKey } from '../../functions/workspaces/bucket.js';
import { withWorkspace } from '../../functions/workspaces/resolve.js';
import { TxsClient } from '../../lib/cli/client.js';
import { ApiError } from '../../lib/cli/errors.js';
import { lambdaContext, proxyEvent } from '../../lib/local/lambda-events.js';
import { LOCAL_TABLE_NAME } from '../../lib/local/server.js';
import { parseRunRequest, ValidationError, type WorkspaceOfferResponse } from '../../lib/specs/index.js';
import { MOTO_CREDENTIALS, MOTO_REGION } from './constants.js';
import { pointSdkAtMoto } from './helpers.js';
import { type S3Gate, startS3Gate } from './s3-gate.js';

const BUCKET = 'txs-moto-workspaces';
const ALICE = 'arn:aws:sts::123456789012:assumed-role/ml-team/alice';
const ALICE_OWNER = 'arn:aws:iam::123456789012:role/ml-team';
const BOB = 'arn:aws:sts::123456789012:assumed-role/vision-team/bob';
const BOB_OWNER = 'arn:aws:iam::123456789012:role/vision-team';

type Handler = (event: APIGatewayProxyEvent, context: unknown) => Promise<APIGatewayProxyResult>;
let offerHandler: Handler;
let gate: S3Gate;
let s3: S3Client;
let dir: string;
let archive: string;
let bytes: Buffer;
let sha256: string;

beforeAll(async () => {
  const clientConfig = pointSdkAtMoto();
  s3 = new S3Client(clientConfig);
  await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
  // The functions' S3 client signs for the gate, which passes what S3 would accept on to moto.
  gate = await startS3Gate(clientConfig.endpoint);
  process.env.AWS_ENDPOINT_URL = gate.url;
  process.env[ENV.tableName] = LOCAL_TABLE_NAME;
  process.env[ENV.dynamoDbEndpoint] = clientConfig.endpoint;
  process.env[ENV.schedulers] = 'local_cwd';
  process.env[ENV.localDataDir] = tmpdir();
  process.env[ENV.workspaceBucket] = BUCKET;
  configureClients(undefined);
  offerHandler = ((await import('../../functions/api/workspaces.js')) as { handler: Handler }).handler;
  dir = await mkdtemp(join(tmpdir(), 'txs-moto-workspace-'));
  archive = join(dir, 'archive.tar.gz');
  bytes = Buffer.alloc(2 * 1024 * 1024 + 17, 0x5a);
  await writeFile(archive, bytes);
  sha256 = createHash('sha256').update(bytes).digest('hex');
});
afterAll(async () => {
  s3?.destroy();
  await gate?.close();
  for (const name of [
    ENV.tableName,
    ENV.dynamoDbEndpoint,
    ENV.schedulers,
    ENV.localDataDir,
    ENV.workspaceBucket,
  ])
    delete process.env[name];
  pointSdkAtMoto();
  configureClients(undefined);
  await rm(dir, { recursive: true, force: true });
});

/** `POST /v1/workspaces` through the deployed handler, as `user`. */
async function offer(
  user: string,
  archive: { sha256: string; size: number } = { sha256, size: bytes.length },
): Promise<WorkspaceOfferResponse> {
  const event = proxyEvent({
    method: 'POST',
    resource: '/v1/workspaces',
    path: '/v1/workspaces',
    headers: { 'content-type': ['application/json'] },
    query: {},
    pathParameters: null,
    body: JSON.stringify({ ...archive, fileCount: 41 }),
    isBase64Encoded: false,
    user,
    sourceIp: '10.0.0.1',
    userAgent: null,
  });
  const result = await offerHandler(event, lambdaContext('Workspaces'));
  expect(result.statusCode, result.body).toBe(200);
  return JSON.parse(result.body) as WorkspaceOfferResponse;
}

const runRequest = () =>
  parseRunRequest({ scheduler: 'local_cwd', component: 'utils.echo', workspace: { sha256 } });

describe('workspace archives in S3 (moto)', () => {
  it('uploads through the presigned URL once; S3 holds the bytes, length and file count under the owner’s key', async () => {
    const first = await offer(ALICE);
    expect(first.stored).toBe(false);
    const upload = first.upload;
    if (upload === undefined) throw new Error('no upload URL');
    expect(upload.url.startsWith(`${gate.url}/${BUCKET}/`)).toBe(true);

    const client = new TxsClient({ endpoint: 'http://127.0.0.1:9', maxRetries: 0 });
    await client.sendWorkspace(upload, () => createReadStream(archive));

    const head = await s3.send(
      new HeadObjectCommand({
        Bucket: BUCKET,
        Key: archiveKey(ALICE_OWNER, sha256),
        ChecksumMode: 'ENABLED',
      }),
    );
    expect(head.ContentLength).toBe(bytes.length);
    expect(head.Metadata).toEqual({ 'file-count': '41' });
    const stored = await s3.send(
      new GetObjectCommand({ Bucket: BUCKET, Key: archiveKey(ALICE_OWNER, sha256) }),
    );
    expect(Buffer.from(await (stored.Body?.transformToByteArray() ?? [])).equals(bytes)).toBe(true);

    // The next run of the same workspace sends nothing.
    expect(await offer(ALICE)).toEqual({ sha256, stored: true });
    expect(gate.refused).toEqual([]);
  });

  it('resolves a run’s workspace through HeadObject to the owner’s s3:// archive', async () => {
    const { workspace } = await withWorkspace(runRequest(), ALICE_OWNER);
    expect(workspace).toEqual({
      sha256,
      size: bytes.length,
      fileCount: 41,
      archive: `s3://${BUCKET}/${archiveKey(ALICE_OWNER, sha256)}`,
    });
  });

  it('keeps another owner out: not stored for Bob, and Bob’s run with the same hash is refused', async () => {
    const bob = await offer(BOB);
    expect(bob.stored).toBe(false);
    expect(bob.upload?.url).toContain(archiveKey(BOB_OWNER, sha256));
    const refused = await withWorkspace(runRequest(), BOB_OWNER).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ValidationError);
    expect((refused as ValidationError).issues[0]?.path).toBe('workspace.sha256');
  });

  describe('an upload that is not the archive the URL was signed for', () => {
    const other = Buffer.alloc(4096, 0x33);
    const otherSha = createHash('sha256').update(other).digest('hex');
    const client = new TxsClient({ endpoint: 'http://127.0.0.1:9', maxRetries: 0 });
    const urlFor = async () => {
      const answer = await offer(ALICE, { sha256: otherSha, size: other.length });
      if (answer.upload === undefined) throw new Error('no upload URL');
      return answer.upload;
    };
    const notStored = async () => {
      const head = await s3
        .send(new HeadObjectCommand({ Bucket: BUCKET, Key: archiveKey(ALICE_OWNER, otherSha) }))
        .catch((e: unknown) => e);
      expect((head as { name?: string }).name).toBe('NotFound');
    };

    it('is refused for other bytes of the same length (BadDigest), and nothing is stored', async () => {
      const upload = await urlFor();
      const error = await client
        .sendWorkspace(upload, () => Readable.from([Buffer.alloc(other.length, 0x34)]))
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ApiError);
      expect(error).toMatchObject({ apiCode: 'BadDigest', status: 400 });
      expect((error as ApiError).message).toContain('not the archive the upload URL was signed for');
      await notStored();
    });

    it('is refused for another length (the signature covers Content-Length), and nothing is stored', async () => {
      const upload = await urlFor();
      const longer = Buffer.concat([other, Buffer.from('!')]);
      const error = await client
        .sendWorkspace(
          { ...upload, headers: { ...upload.headers, 'content-length': String(longer.length) } },
          () => Readable.from([longer]),
        )
        .catch((e: unknown) => e);
      expect(error).toMatchObject({ apiCode: 'SignatureDoesNotMatch', status: 403 });
      await notStored();
    });

    it('is refused with another checksum header (the signature covers it), and nothing is stored', async () => {
      const upload = await urlFor();
      const lie = createHash('sha256').update('something else').digest('base64');
      const error = await client
        .sendWorkspace({ ...upload, headers: { ...upload.headers, 'x-amz-checksum-sha256': lie } }, () =>
          Readable.from([other]),
        )
        .catch((e: unknown) => e);
      expect(error).toMatchObject({ apiCode: 'SignatureDoesNotMatch', status: 403 });
      await notStored();
    });

    it('is stored when the bytes are the archive, through the same URL', async () => {
      const upload = await urlFor();
      await client.sendWorkspace(upload, () => Readable.from([other]));
      const head = await s3.send(
        new HeadObjectCommand({ Bucket: BUCKET, Key: archiveKey(ALICE_OWNER, otherSha) }),
      );
      expect(head.ContentLength).toBe(other.length);
      expect(gate.refused).toEqual(['BadDigest', 'SignatureDoesNotMatch', 'SignatureDoesNotMatch']);
    });

    it('is refused through a URL presigned without the SHA-256, which the SDK pins to the CRC32 of no body', async () => {
      const presigner = new S3Client({
        region: MOTO_REGION,
        credentials: MOTO_CREDENTIALS,
        endpoint: gate.url,
        forcePathStyle: true,
      });
      const url = await getSignedUrl(
        presigner,
        new PutObjectCommand({
          Bucket: BUCKET,
          Key: archiveKey(ALICE_OWNER, 'crc'),
          ContentLength: other.length,
        }),
        { expiresIn: 60 },
      );
      presigner.destroy();
      expect(new URL(url).searchParams.get('x-amz-checksum-crc32')).toBe('AAAAAA==');
      const error = await client
        .sendWorkspace({ method: 'PUT', url, headers: { 'content-length': String(other.length) } }, () =>
          Readable.from([other]),
        )
        .catch((e: unknown) => e);
      expect(error).toMatchObject({ apiCode: 'BadDigest', status: 400 });
      expect(gate.refused.at(-1)).toBe('BadDigest');
    });
  });
});
