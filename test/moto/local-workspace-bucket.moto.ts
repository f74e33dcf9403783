/**
 * The local server's copy of a workspace to its bucket over the real S3 wire, against moto: an archive
 * uploaded to the local server and run on aws_batch is put in `TXS_WORKSPACE_BUCKET` by the server's own S3
 * client (the file streamed, with its SHA-256 checksum and file count), under the caller's prefix, and the
 * job is submitted with that `s3://` archive; a second run finds it there and puts nothing. moto 5.2 neither
 * checks a PUT's `x-amz-checksum-sha256` against its body nor answers it on HeadObject, so the checksum the
 * PutObject carries is checked at the SDK wire (test/integration/local/workspace-bucket.test.ts).
 */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import {
  CreateBucketCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENV } from '../../functions/shared/env-names.js';
import type { TxsClient } from '../../lib/cli/client.js';
import { tarGzOf } from '../helpers/workspace-archives.js';
import { MOTO_QUEUE } from './constants.js';
import { type MotoHarness, startServerOnMoto } from './helpers.js';

const BUCKET = 'txs-moto-local-workspaces';
const JOB_ROLE = 'arn:aws:iam::123456789012:role/txs-moto-job';

let harness: MotoHarness;
let s3: S3Client;
let client: TxsClient;
let bytes: Buffer;
let sha256: string;

beforeAll(async () => {
  process.env[ENV.workspaceBucket] = BUCKET;
  harness = await startServerOnMoto();
  s3 = new S3Client(harness.clientConfig);
  await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
  client = harness.client('local-bucket-user');
  bytes = await tarGzOf([
    { name: 'train.py', body: 'print("from the workspace")\n' },
    { name: 'data.txt', body: 'x'.repeat(70_000) },
  ]);
  sha256 = createHash('sha256').update(bytes).digest('hex');
  const offer = await client.offerWorkspace({
    sha256,
    size: bytes.length,
    fileCount: 2,
    scheduler: 'aws_batch',
  });
  if (offer.upload === undefined) throw new Error('the local server holds the archive already');
  await client.sendWorkspace(offer.upload, () => Readable.from([bytes]));
});

afterAll(async () => {
  s3?.destroy();
  await harness?.close();
  delete process.env[ENV.workspaceBucket];
});

const runWithWorkspace = (key: string) =>
  client.run(
    {
      scheduler: 'aws_batch',
      cfg: { queue: MOTO_QUEUE, job_role_arn: JOB_ROLE },
      component: 'utils.echo',
      args: [],
      workspace: { sha256 },
    },
    key,
  );

describe('the local server’s workspace for aws_batch, in its bucket (moto)', () => {
  it('puts the archive in the bucket under the caller’s prefix with its SHA-256 and file count, once', async () => {
    const first = await runWithWorkspace('first');
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'workspaces/' }));
    const keys = (listed.Contents ?? []).map((object) => object.Key);
    expect(keys).toHaveLength(1);
    const key = keys[0] ?? '';
    expect(key).toMatch(new RegExp(`^workspaces/[0-9a-f]{32}/${sha256}\\.tar\\.gz$`));

    const head = await s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: key }));
    expect(head.ContentLength).toBe(bytes.length);
    expect(head.Metadata).toEqual({ 'file-count': '2' });
    const stored = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
    expect(Buffer.from(await (stored.Body?.transformToByteArray() ?? [])).equals(bytes)).toBe(true);

    const app = await client.getApp(first.handle);
    expect(app.workspace).toEqual({ sha256, size: bytes.length, fileCount: 2 });

    // Marked, so a PutObject of the next run would show: the next run finds the object and puts nothing.
    await s3.send(
      new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: bytes, Metadata: { 'file-count': '99' } }),
    );
    await runWithWorkspace('second');
    const again = await s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: key }));
    expect(again.Metadata).toEqual({ 'file-count': '99' });
  });
});
