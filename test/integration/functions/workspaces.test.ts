/**
 * Workspaces in a deployed stack, through the deployed handlers: `POST /v1/workspaces` answers `stored` or a
 * presigned S3 PUT pinned to the archive's length and checksum under the caller's own prefix, and a run or a
 * dry run resolves `workspace: {sha256}` to the caller's archive in the bucket. Real store (dynalite); S3
 * faked at the SDK wire with the shapes S3 answers (HeadObject: `NotFound` 404 with no body, or the object's
 * length, Last-Modified and user metadata).
 */
import { HeadObjectCommand, NotFound, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { configureClients } from '../../../functions/shared/container.js';
import { ENV } from '../../../functions/shared/env-names.js';
import { archiveKey, ownerPrefix } from '../../../functions/workspaces/bucket.js';
import { dryrunWorkspace, withWorkspace } from '../../../functions/workspaces/resolve.js';
import { lambdaContext, proxyEvent } from '../../../lib/local/lambda-events.js';
import { parseRunRequest } from '../../../lib/specs/index.js';
import { type Dynalite, itemCount, startDynalite } from '../../helpers/dynalite.js';

const ACCOUNT = '123456789012';
const ALICE = `arn:aws:sts::${ACCOUNT}:assumed-role/ml-team/alice`;
const BOB = `arn:aws:sts::${ACCOUNT}:assumed-role/vision-team/bob`;
const ALICE_OWNER = `arn:aws:iam::${ACCOUNT}:role/ml-team`;
const BOB_OWNER = `arn:aws:iam::${ACCOUNT}:role/vision-team`;
const BUCKET = 'txs-workspaces-test';
const SHA = 'ab'.repeat(32);
const DAY_MS = 24 * 60 * 60 * 1000;

type Handler = (event: APIGatewayProxyEvent, context: unknown) => Promise<APIGatewayProxyResult>;
const handlers: Record<string, Handler> = {};
const s3 = mockClient(S3Client);
let db: Dynalite;

/** S3's answer to HeadObject of a key it does not hold (with s3:ListBucket): 404, `NotFound`, no body. */
const notFound = () =>
  new NotFound({ message: 'UnknownError', $metadata: { httpStatusCode: 404, requestId: 'R1' } });

/** S3's answer to HeadObject of a stored archive. */
const stored = (options: { size: number; fileCount: string; ageDays: number }) => ({
  $metadata: { httpStatusCode: 200 },
  AcceptRanges: 'bytes',
  ContentLength: options.size,
  ContentType: 'application/octet-stream',
  ETag: '"227dac861c7f5bf02ce4348064823afa"',
  LastModified: new Date(Date.now() - options.ageDays * DAY_MS),
  Metadata: { 'file-count': options.fileCount },
  ServerSideEncryption: 'AES256' as const,
});

beforeAll(async () => {
  db = await startDynalite();
  process.env[ENV.tableName] = db.tableName;
  process.env[ENV.dynamoDbEndpoint] = db.endpoint;
  process.env[ENV.schedulers] = 'local_cwd,aws_batch,lsf';
  process.env[ENV.localDataDir] = '/tmp/txs-unused';
  process.env[ENV.workspaceBucket] = BUCKET;
  process.env[ENV.workspaceDays] = '30';
  process.env.AWS_REGION = 'us-east-1';
  process.env.AWS_ACCESS_KEY_ID = 'AKIAEXAMPLE';
  process.env.AWS_SECRET_ACCESS_KEY = 'secret';
  configureClients(undefined);
  for (const name of ['workspaces', 'run']) {
    handlers[name] = ((await import(`../../../functions/api/${name}.ts`)) as { handler: Handler }).handler;
  }
});
afterAll(() => {
  for (const name of [ENV.workspaceBucket, ENV.workspaceDays, ENV.schedulers, ENV.localDataDir])
    delete process.env[name];
  configureClients(undefined);
  return db.close();
});
beforeEach(() => s3.reset());

/** What the handlers answer (a workspace offer, or an error). */
interface Answer {
  sha256?: string;
  stored?: boolean;
  upload?: { method: string; url: string; headers: Record<string, string>; expiresAt: string };
  error?: { code: string; message: string; details: { path: string; message: string }[] };
}

async function call(name: string, path: string, user: string, body: unknown) {
  const event = proxyEvent({
    method: 'POST',
    resource: path,
    path,
    headers: { 'content-type': ['application/json'] },
    query: {},
    pathParameters: null,
    body: JSON.stringify(body),
    isBase64Encoded: false,
    user,
    sourceIp: '10.0.0.1',
    userAgent: null,
  });
  const result = await (handlers[name] as Handler)(event, lambdaContext(name));
  return { status: result.statusCode, body: JSON.parse(result.body) as Answer };
}

describe('POST /v1/workspaces (deployed stack)', () => {
  it('answers a presigned PUT that signs the length, the SHA-256 checksum and the file count, under the caller’s prefix', async () => {
    s3.on(HeadObjectCommand).rejects(notFound());
    const answer = await call('workspaces', '/v1/workspaces', ALICE, {
      sha256: SHA,
      size: 1234,
      fileCount: 7,
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ sha256: SHA, stored: false, upload: { method: 'PUT' } });
    const { url, headers, expiresAt } = answer.body.upload ?? { url: '', headers: {}, expiresAt: '' };
    const checksum = Buffer.from(SHA, 'hex').toString('base64');
    expect(headers).toEqual({
      'content-length': '1234',
      'x-amz-checksum-sha256': checksum,
      'x-amz-meta-file-count': '7',
    });
    const signed = new URL(url);
    expect(signed.protocol).toBe('https:');
    expect(decodeURIComponent(signed.pathname)).toBe(`/${archiveKey(ALICE_OWNER, SHA)}`);
    expect(signed.hostname).toBe(`${BUCKET}.s3.us-east-1.amazonaws.com`);
    expect(signed.searchParams.get('X-Amz-SignedHeaders')?.split(';')).toEqual([
      'content-length',
      'host',
      'x-amz-checksum-sha256',
      'x-amz-meta-file-count',
    ]);
    // Sent as headers, so the signature covers them: nothing of them is left to the query string.
    expect([...signed.searchParams.keys()].filter((key) => key.startsWith('x-amz-'))).toEqual([]);
    expect(Number(signed.searchParams.get('X-Amz-Expires'))).toBe(900);
    expect(Date.parse(expiresAt) - Date.now()).toBeGreaterThan(800_000);
    // The existence check looked in the caller's prefix only.
    expect(s3.commandCalls(HeadObjectCommand).map((c) => c.args[0].input)).toEqual([
      { Bucket: BUCKET, Key: archiveKey(ALICE_OWNER, SHA) },
    ]);
  });

  it('answers stored, with nothing to send, when the caller uploaded the archive recently', async () => {
    s3.on(HeadObjectCommand).resolves(stored({ size: 1234, fileCount: '7', ageDays: 3 }));
    const answer = await call('workspaces', '/v1/workspaces', ALICE, {
      sha256: SHA,
      size: 1234,
      fileCount: 7,
    });
    expect(answer).toEqual({ status: 200, body: { sha256: SHA, stored: true } });
  });

  it('asks for the archive again when it was uploaded more than half the bucket’s 30 days ago', async () => {
    s3.on(HeadObjectCommand).resolves(stored({ size: 1234, fileCount: '7', ageDays: 16 }));
    const answer = await call('workspaces', '/v1/workspaces', ALICE, {
      sha256: SHA,
      size: 1234,
      fileCount: 7,
    });
    expect(answer.body.stored).toBe(false);
    expect(answer.body.upload?.url).toContain(ownerPrefix(ALICE_OWNER));
  });

  it('looks for another caller’s archive under that caller’s own prefix, never Alice’s', async () => {
    s3.on(HeadObjectCommand, { Key: archiveKey(ALICE_OWNER, SHA) }).resolves(
      stored({ size: 1234, fileCount: '7', ageDays: 1 }),
    );
    s3.on(HeadObjectCommand).rejects(notFound());
    const answer = await call('workspaces', '/v1/workspaces', BOB, { sha256: SHA, size: 1234, fileCount: 7 });
    expect(answer.body.stored).toBe(false);
    expect(ownerPrefix(BOB_OWNER)).not.toBe(ownerPrefix(ALICE_OWNER));
    expect(s3.commandCalls(HeadObjectCommand).map((c) => c.args[0].input.Key)).toEqual([
      archiveKey(BOB_OWNER, SHA),
    ]);
    expect(answer.body.upload?.url).toContain(ownerPrefix(BOB_OWNER));
  });

  it.each([
    [{ sha256: 'ABC', size: 1, fileCount: 1 }, 'sha256'],
    [{ sha256: SHA, size: 0, fileCount: 1 }, 'size'],
    [{ sha256: SHA, size: 700 * 1024 * 1024, fileCount: 1 }, 'size'],
    [{ sha256: SHA, size: 10, fileCount: -1 }, 'fileCount'],
    [{ sha256: SHA, size: 10 }, 'fileCount'],
  ])('refuses %j with 400 naming %s, and asks S3 nothing', async (body, path) => {
    const answer = await call('workspaces', '/v1/workspaces', ALICE, body);
    expect(answer.status).toBe(400);
    expect(answer.body.error?.details[0]?.path).toBe(path);
    expect(s3.calls()).toHaveLength(0);
  });

  it('answers 502 BackendAccessDenied, not "not stored", when S3 denies the check', async () => {
    s3.on(HeadObjectCommand).rejects(
      new S3ServiceException({
        name: 'Forbidden',
        $fault: 'client',
        message: 'UnknownError',
        $metadata: { httpStatusCode: 403 },
      }),
    );
    const answer = await call('workspaces', '/v1/workspaces', ALICE, { sha256: SHA, size: 1, fileCount: 1 });
    expect(answer.status).toBe(502);
    expect(answer.body.error?.code).toBe('BackendAccessDenied');
  });
});

describe('a run with a workspace (deployed stack)', () => {
  const runBody = { scheduler: 'local_cwd', component: 'utils.echo', workspace: { sha256: SHA } };

  it('refuses an archive the caller has not uploaded with 400 naming workspace.sha256, and records nothing', async () => {
    s3.on(HeadObjectCommand).rejects(notFound());
    const before = await itemCount(db.client, db.tableName);
    const answer = await call('run', '/v1/apps', ALICE, runBody);
    expect(answer.status).toBe(400);
    expect(answer.body.error?.details).toEqual([
      { path: 'workspace.sha256', message: expect.stringContaining('POST /v1/workspaces') },
    ]);
    expect(await itemCount(db.client, db.tableName)).toBe(before);
  });

  it('resolves the reference to the caller’s s3:// archive, with the size and file count S3 holds', async () => {
    s3.on(HeadObjectCommand).resolves(stored({ size: 4096, fileCount: '12', ageDays: 1 }));
    const request = parseRunRequest(runBody);
    const { workspace } = await withWorkspace(request, ALICE_OWNER);
    expect(workspace).toEqual({
      sha256: SHA,
      size: 4096,
      fileCount: 12,
      archive: `s3://${BUCKET}/${archiveKey(ALICE_OWNER, SHA)}`,
    });
  });

  it('gives a dry run where the job would fetch the archive, and whether it is uploaded yet', async () => {
    s3.on(HeadObjectCommand).rejects(notFound());
    expect(await dryrunWorkspace(parseRunRequest(runBody), ALICE_OWNER)).toEqual({
      sha256: SHA,
      size: 0,
      fileCount: 0,
      archive: `s3://${BUCKET}/${archiveKey(ALICE_OWNER, SHA)}`,
      stored: false,
    });
  });

  it('refuses a workspace for a scheduler that cannot take one, before asking S3', async () => {
    const answer = await call('run', '/v1/apps', ALICE, {
      scheduler: 'lsf',
      component: 'utils.echo',
      workspace: { sha256: SHA },
    });
    expect(answer.status).toBe(400);
    expect(answer.body.error?.details[0]?.path).toBe('workspace');
    expect(s3.calls()).toHaveLength(0);
  });
});

describe('a stack without a workspace bucket', () => {
  it('refuses POST /v1/workspaces and a run with a workspace with 400 naming workspace', async () => {
    delete process.env[ENV.workspaceBucket];
    configureClients(undefined);
    try {
      const offer = await call('workspaces', '/v1/workspaces', ALICE, { sha256: SHA, size: 1, fileCount: 1 });
      expect(offer.status).toBe(400);
      expect(offer.body.error?.message).toContain('no workspace bucket');
      const run = await call('run', '/v1/apps', ALICE, {
        scheduler: 'local_cwd',
        component: 'utils.echo',
        workspace: { sha256: SHA },
      });
      expect(run.status).toBe(400);
      expect(run.body.error?.details[0]?.path).toBe('workspace');
      expect(s3.calls()).toHaveLength(0);
    } finally {
      process.env[ENV.workspaceBucket] = BUCKET;
      configureClients(undefined);
    }
  });
});
