/**
 * The local server's workspace for schedulers whose jobs fetch it from S3 (aws_batch here), and the local dry
 * runs: `txs run` against the real local server (in process, in-memory store), which copies its stored
 * archive to its `TXS_WORKSPACE_BUCKET` under the caller's prefix before submitting, and refuses such a run
 * without a bucket before the archive is uploaded. S3 and Batch are faked at the SDK wire with the shapes
 * they answer (HeadObject: `NotFound` 404 with no body, or the object; PutObject: its ETag and checksum, or
 * `AccessDenied` 403).
 */
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import {
  BatchClient,
  DescribeJobsCommand,
  ListJobsCommand,
  RegisterJobDefinitionCommand,
  SubmitJobCommand,
} from '@aws-sdk/client-batch';
import {
  HeadObjectCommand,
  NotFound,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { configureClients } from '../../../functions/shared/container.js';
import { ENV } from '../../../functions/shared/env-names.js';
import { ExitCode } from '../../../lib/cli/index.js';
import type { LocalServer } from '../../../lib/local/server.js';
import { validateResponses } from '../../helpers/openapi-validator.js';
import { runTxs } from '../../helpers/real-time-cli.js';
import { ACCOUNT, JOB_ARN, JOB_ID } from '../../unit/aws-batch/helpers.js';

const BUCKET = 'txs-workspaces-local-test';
const USER = 'bucket-user';
const CFG = `queue=gpu,job_role_arn=arn:aws:iam::${ACCOUNT}:role/txs-job`;
const KEY = /^workspaces\/[0-9a-f]{32}\/([0-9a-f]{64})\.tar\.gz$/;

const s3 = mockClient(S3Client);
const batch = mockClient(BatchClient);
const saved = { ...process.env };
let server: LocalServer;
let dataDir: string;
/** Every request the CLI sent, as `METHOD path`. */
const sent: string[] = [];
const { transport: validating } = validateResponses(() => server?.url);

/** S3's answer to HeadObject of a key it does not hold (with s3:ListBucket): 404, `NotFound`, no body. */
const notFound = () =>
  new NotFound({ message: 'UnknownError', $metadata: { httpStatusCode: 404, requestId: 'R1' } });

beforeAll(async () => {
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
  process.env.AWS_REGION = 'us-east-1';
  process.env.AWS_ACCESS_KEY_ID = 'test';
  process.env.AWS_SECRET_ACCESS_KEY = 'test';
  process.env[ENV.workspaceBucket] = BUCKET;
  dataDir = await mkdtemp(join(tmpdir(), 'txs-workspace-bucket-'));
  await mkdir(join(dataDir, 'home'));
  const { startLocalServer } = await import('../../../lib/local/server.js');
  server = await startLocalServer({
    port: 0,
    dataDir: join(dataDir, 'server'),
    inMemory: true,
    schedulers: ['aws_batch', 'local_docker', 'slurm'],
    reconcileEveryMs: 0,
    followEveryMs: 3_600_000,
    tokenFile: join(dataDir, 'run', 'server.token'),
  });
});

afterAll(async () => {
  await server?.close();
  s3.restore();
  batch.restore();
  process.env = saved;
  configureClients(undefined);
  await rm(dataDir, { recursive: true, force: true });
});

beforeEach(() => {
  s3.reset();
  batch.reset();
  sent.length = 0;
  batch.on(RegisterJobDefinitionCommand).callsFake((input: { jobDefinitionName: string }) => ({
    jobDefinitionName: input.jobDefinitionName,
    jobDefinitionArn: `arn:aws:batch:us-east-1:${ACCOUNT}:job-definition/${input.jobDefinitionName}:1`,
    revision: 1,
  }));
  batch
    .on(SubmitJobCommand)
    .callsFake((input: { jobName: string }) => ({ jobId: JOB_ID, jobName: input.jobName, jobArn: JOB_ARN }));
  batch.on(DescribeJobsCommand).resolves({ jobs: [] });
  batch.on(ListJobsCommand).resolves({ jobSummaryList: [] });
});

function txs(cwd: string, ...args: string[]): Promise<{ code: number; out: string; err: string }> {
  return runTxs(args, {
    env: { TXS_ENDPOINT: server.url, TXS_USER: USER, TXS_LOCAL_TOKEN_FILE: server.tokenFile },
    cwd,
    homeDir: join(dataDir, 'home'),
    transport: async (exchange) => {
      sent.push(`${exchange.method} ${exchange.url.pathname}`);
      return validating(exchange);
    },
  });
}

/** A new source directory holding `files`. */
async function sourceDir(name: string, files: Record<string, string>): Promise<string> {
  const dir = join(dataDir, name);
  await mkdir(dir);
  for (const [file, text] of Object.entries(files)) await writeFile(join(dir, file), text);
  return dir;
}

/** `POST path` with `body`, straight to the server with its token (as any client of the same user). */
function api(path: string, body: unknown): Promise<Response> {
  return fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${server.token}`,
      'content-type': 'application/json',
      'x-txs-user': USER,
    },
    body: JSON.stringify(body),
  });
}

/** The bytes of a PutObject's body (a stream of the server's archive file). */
async function bytesOf(body: unknown): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body as Readable) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Everything Batch was asked to register or submit, as text (where the job's fetch of its workspace is). */
function submitted(): string {
  return JSON.stringify([
    ...batch.commandCalls(RegisterJobDefinitionCommand).map((call) => call.args[0].input),
    ...batch.commandCalls(SubmitJobCommand).map((call) => call.args[0].input),
  ]);
}

describe('the local server with a workspace bucket, for a scheduler whose jobs fetch from S3', () => {
  it('copies its stored archive to the bucket under the caller’s prefix, pinned to its SHA-256, and the job fetches it from there', async () => {
    const src = await sourceDir('copied', { 'train.py': 'print("copied")\n' });
    s3.on(HeadObjectCommand).rejects(notFound());
    let received: Buffer | undefined;
    s3.on(PutObjectCommand).callsFake(async (input: { Body: unknown; ChecksumSHA256: string }) => {
      received = await bytesOf(input.Body);
      return {
        $metadata: { httpStatusCode: 200 },
        ETag: '"227dac861c7f5bf02ce4348064823afa"',
        ChecksumSHA256: input.ChecksumSHA256,
        ServerSideEncryption: 'AES256',
      };
    });
    const run = await txs(src, 'run', '-s', 'aws_batch', '-cfg', CFG, 'utils.echo');
    expect(run.code, run.err).toBe(ExitCode.OK);

    const puts = s3.commandCalls(PutObjectCommand).map((call) => call.args[0].input);
    expect(puts).toHaveLength(1);
    const put = puts[0];
    const sha256 = KEY.exec(put?.Key ?? '')?.[1];
    expect(sha256).toBeDefined();
    expect(put).toMatchObject({
      Bucket: BUCKET,
      ContentLength: received?.length,
      ChecksumSHA256: Buffer.from(sha256 ?? '', 'hex').toString('base64'),
      Metadata: { 'file-count': '1' },
    });
    // What was sent is the archive the key names.
    expect(
      createHash('sha256')
        .update(received ?? Buffer.alloc(0))
        .digest('hex'),
    ).toBe(sha256);
    // Looked for first, under the same key.
    expect(s3.commandCalls(HeadObjectCommand).map((call) => call.args[0].input)).toEqual([
      { Bucket: BUCKET, Key: put?.Key },
    ]);
    expect(submitted()).toContain(`s3://${BUCKET}/${put?.Key}`);
    expect(submitted()).not.toContain(join(dataDir, 'server'));
  });

  it('sends the PutObject again, from the file again, when S3 fails it transiently (503 SlowDown)', async () => {
    const src = await sourceDir('slow-down', { 'train.py': 'print("slow")\n' });
    s3.on(HeadObjectCommand).rejects(notFound());
    const bodies: Buffer[] = [];
    s3.on(PutObjectCommand)
      .callsFakeOnce(async (input: { Body: unknown }) => {
        bodies.push(await bytesOf(input.Body));
        throw new S3ServiceException({
          name: 'SlowDown',
          $fault: 'server',
          message: 'Please reduce your request rate.',
          $metadata: { httpStatusCode: 503, requestId: 'R4' },
        });
      })
      .callsFake(async (input: { Body: unknown; ChecksumSHA256: string }) => {
        bodies.push(await bytesOf(input.Body));
        return { $metadata: { httpStatusCode: 200 }, ETag: '"e"', ChecksumSHA256: input.ChecksumSHA256 };
      });
    const run = await txs(src, 'run', '-s', 'aws_batch', '-cfg', CFG, 'utils.echo');
    expect(run.code, run.err).toBe(ExitCode.OK);
    expect(bodies).toHaveLength(2);
    // Each attempt sent the whole archive.
    expect(bodies[1]?.length).toBeGreaterThan(0);
    expect(bodies[1]?.equals(bodies[0] ?? Buffer.alloc(0))).toBe(true);
    expect(batch.commandCalls(SubmitJobCommand)).toHaveLength(1);
  });

  it('sends no PutObject when the bucket holds the archive already', async () => {
    const src = await sourceDir('held', { 'train.py': 'print("held")\n' });
    s3.on(HeadObjectCommand).callsFake((input: { Key: string }) => ({
      $metadata: { httpStatusCode: 200 },
      AcceptRanges: 'bytes',
      ContentLength: 180,
      ContentType: 'application/octet-stream',
      ETag: '"227dac861c7f5bf02ce4348064823afa"',
      LastModified: new Date(Date.now() - 60_000),
      Metadata: { 'file-count': '1' },
      ServerSideEncryption: 'AES256',
      Key: input.Key,
    }));
    const run = await txs(src, 'run', '-s', 'aws_batch', '-cfg', CFG, 'utils.echo');
    expect(run.code, run.err).toBe(ExitCode.OK);
    expect(s3.commandCalls(PutObjectCommand)).toHaveLength(0);
    const key = s3.commandCalls(HeadObjectCommand)[0]?.args[0].input.Key ?? '';
    expect(key).toMatch(KEY);
    expect(submitted()).toContain(`s3://${BUCKET}/${key}`);
  });

  it('refuses the run with 502 BackendAccessDenied when S3 denies the copy, submitting nothing', async () => {
    const src = await sourceDir('denied', { 'train.py': 'print("denied")\n' });
    s3.on(HeadObjectCommand).rejects(notFound());
    s3.on(PutObjectCommand).rejects(
      new S3ServiceException({
        name: 'AccessDenied',
        $fault: 'client',
        message: 'Access Denied',
        $metadata: { httpStatusCode: 403, requestId: 'R2' },
      }),
    );
    const run = await txs(src, 'run', '-s', 'aws_batch', '-cfg', CFG, 'utils.echo');
    expect(run.code).not.toBe(ExitCode.OK);
    // The project's one mapping: AWS's text stays in the server's log, the client gets the code's own words.
    expect(run.err).toContain('AWS denied a call this service needs');
    expect(batch.commandCalls(SubmitJobCommand)).toHaveLength(0);
    const answer = await api('/v1/apps', {
      scheduler: 'aws_batch',
      cfg: { queue: 'gpu', job_role_arn: `arn:aws:iam::${ACCOUNT}:role/txs-job` },
      component: 'utils.echo',
      workspace: { sha256: KEY.exec(s3.commandCalls(PutObjectCommand)[0]?.args[0].input.Key ?? '')?.[1] },
    });
    expect(answer.status).toBe(502);
    expect(((await answer.json()) as { error: { code: string } }).error.code).toBe('BackendAccessDenied');
  });

  it('answers 503 BackendError, not retryable, when S3 refuses the bytes (BadDigest), submitting nothing', async () => {
    const src = await sourceDir('bad-digest', { 'train.py': 'print("digest")\n' });
    const dry = await txs(src, 'run', '--dryrun', '-s', 'aws_batch', '-cfg', CFG, 'utils.echo');
    const sha256 = /workspace: ([0-9a-f]{64})/.exec(dry.out)?.[1] ?? '';
    // Stored on the local server first (POST /v1/workspaces, then its PUT), as `txs run` does.
    expect((await txs(src, 'workspace')).code).toBe(ExitCode.OK);
    s3.on(HeadObjectCommand).rejects(notFound());
    s3.on(PutObjectCommand).rejects(
      new S3ServiceException({
        name: 'BadDigest',
        $fault: 'client',
        message: 'The SHA256 you specified did not match the calculated checksum.',
        $metadata: { httpStatusCode: 400, requestId: 'R3' },
      }),
    );
    const answer = await api('/v1/apps', {
      scheduler: 'aws_batch',
      cfg: { queue: 'gpu', job_role_arn: `arn:aws:iam::${ACCOUNT}:role/txs-job` },
      component: 'utils.echo',
      workspace: { sha256 },
    });
    expect(answer.status).toBe(503);
    expect(answer.headers.get('retry-after')).toBeNull();
    expect(((await answer.json()) as { error: { code: string } }).error.code).toBe('BackendError');
    expect(s3.commandCalls(PutObjectCommand)).toHaveLength(1);
    expect(batch.commandCalls(SubmitJobCommand)).toHaveLength(0);
  });

  it('shows in a dry run the s3:// archive a run would copy to and the job fetch, calling neither S3 nor uploading', async () => {
    const src = await sourceDir('dry-s3', { 'train.py': 'print("dry")\n' });
    const dry = await txs(src, 'run', '--dryrun', '-s', 'aws_batch', '-cfg', CFG, 'utils.echo');
    expect(dry.code, dry.err).toBe(ExitCode.OK);
    const sha256 = /workspace: ([0-9a-f]{64})/.exec(dry.out)?.[1] ?? '';
    expect(dry.out).toMatch(new RegExp(`s3://${BUCKET}/workspaces/[0-9a-f]{32}/${sha256}\\.tar\\.gz`));
    expect(dry.out).toContain('fetched by the job from s3://');
    expect(s3.calls()).toHaveLength(0);
    expect(sent.filter((request) => request.startsWith('PUT '))).toEqual([]);
  });
});

describe('the local server’s dry run of a scheduler whose jobs use its own archive', () => {
  it('shows local_docker mounting the archive the run would have, without uploading it', async () => {
    const src = await sourceDir('dry-docker', { 'train.py': 'print("docker")\n' });
    const dry = await txs(src, 'run', '--dryrun', '-s', 'local_docker', 'utils.echo');
    expect(dry.code, dry.err).toBe(ExitCode.OK);
    const sha256 = /workspace: ([0-9a-f]{64})/.exec(dry.out)?.[1] ?? '';
    expect(dry.out).toContain(join(dataDir, 'server', 'workspaces', 'archives', `${sha256}.tar.gz`));
    expect(sent.filter((request) => request.startsWith('PUT '))).toEqual([]);
  });

  it('hands slurm the archive to unpack into job_dir, and refuses a workspace without job_dir', async () => {
    const src = await sourceDir('dry-slurm', { 'train.py': 'print("slurm")\n' });
    const dry = await txs(
      src,
      'run',
      '--dryrun',
      '--json',
      '-s',
      'slurm',
      '-cfg',
      'job_dir=/scratch/me',
      'utils.echo',
    );
    expect(dry.code, dry.err).toBe(ExitCode.OK);
    const answer = JSON.parse(dry.out) as { request: { workspace?: { sha256: string; archive: string } } };
    const sha256 = answer.request.workspace?.sha256 ?? '';
    expect(answer.request.workspace?.archive).toBe(
      join(dataDir, 'server', 'workspaces', 'archives', `${sha256}.tar.gz`),
    );
    const without = await txs(src, 'run', '--dryrun', '--workspace', src, '-s', 'slurm', 'utils.echo');
    expect(without.code).toBe(ExitCode.USAGE);
    expect(without.err).toContain('cfg.job_dir');
    expect(sent.filter((request) => request.startsWith('PUT '))).toEqual([]);
  });
});

describe('POST /v1/workspaces naming the run’s scheduler', () => {
  it('refuses a scheduler that takes no workspace, naming workspace, before anything is sent', async () => {
    const answer = await api('/v1/workspaces', {
      sha256: 'ab'.repeat(32),
      size: 10,
      fileCount: 1,
      scheduler: 'lsf',
    });
    expect(answer.status).toBe(400);
    const { error } = (await answer.json()) as { error: { details: { path: string; message: string }[] } };
    expect(error.details[0]?.path).toBe('workspace');
    expect(error.details[0]?.message).toContain('the lsf scheduler cannot take a workspace');
  });
});

describe('the local server without a workspace bucket', () => {
  it('refuses an aws_batch workspace before it is uploaded, saying how to fix it', async () => {
    delete process.env[ENV.workspaceBucket];
    configureClients(undefined);
    try {
      const src = await sourceDir('no-bucket', { 'train.py': 'print("none")\n' });
      const run = await txs(src, 'run', '-s', 'aws_batch', '-cfg', CFG, 'utils.echo');
      expect(run.code).toBe(ExitCode.USAGE);
      expect(run.err).toContain(
        `aws_batch jobs fetch their workspace from S3, and this local server has no workspace bucket: restart it with ${ENV.workspaceBucket} set to an S3 bucket`,
      );
      expect(run.err).toContain('--workspace ""');
      expect(sent).toContain('POST /v1/workspaces');
      expect(sent.filter((request) => request.startsWith('PUT ') || request === 'POST /v1/apps')).toEqual([]);
      const dry = await txs(src, 'run', '--dryrun', '-s', 'aws_batch', '-cfg', CFG, 'utils.echo');
      expect(dry.code).toBe(ExitCode.USAGE);
      expect(dry.err).toContain('has no workspace bucket');
      expect(s3.calls()).toHaveLength(0);
    } finally {
      process.env[ENV.workspaceBucket] = BUCKET;
      configureClients(undefined);
    }
  });

  it('refuses `txs workspace -s aws_batch` at its offer, which names the scheduler, uploading nothing', async () => {
    delete process.env[ENV.workspaceBucket];
    configureClients(undefined);
    try {
      const src = await sourceDir('no-bucket-workspace', { 'train.py': 'print("offer")\n' });
      const refused = await txs(src, 'workspace', '--json', '-s', 'aws_batch', src);
      expect(refused.code).toBe(ExitCode.USAGE);
      expect(refused.err).toContain(
        'aws_batch jobs fetch their workspace from S3, and this local server has no workspace bucket',
      );
      expect(refused.out).toBe('');
      expect(sent).toEqual(['POST /v1/workspaces']);
      // Without -s the same server takes the archive (a local_cwd run could use it): the refusal came from -s.
      sent.length = 0;
      const taken = await txs(src, 'workspace', '--json', src);
      expect(taken.code, taken.err).toBe(ExitCode.OK);
      expect(sent).toEqual(['POST /v1/workspaces', `PUT /v1/workspaces/${JSON.parse(taken.out).sha256}`]);
      expect(s3.calls()).toHaveLength(0);
    } finally {
      process.env[ENV.workspaceBucket] = BUCKET;
      configureClients(undefined);
    }
  });
});
