/**
 * A user's workspace run against a deployed stack, end to end over the real AWS wire (moto): `txs run -s
 * aws_batch --workspace DIR …` (and `-s aws_sagemaker`) in-process, signing its requests with SigV4 from an
 * AWS profile, against the deployed handlers behind an API Gateway stand-in (api-gateway.ts) that checks the
 * signature and names the caller by its IAM credentials. The chain: pack → `POST /v1/workspaces` (the
 * Workspaces function: HeadObject, presign) → the CLI's PUT straight to S3 (through the gate that checks
 * presigned PUTs as S3 does, s3-gate.ts) → `POST /v1/apps` (the Run function: HeadObject, translation with the
 * fetch container, RegisterJobDefinition and SubmitJob) → `txs status` / `txs describe` → a second run of the
 * unchanged tree; another owner naming the same hash; the TorchX plugin's `txs workspace`. Then the job's own
 * side: the fetch container's S3 object and the main container's stored command (SageMaker's entrypoint and
 * arguments), run with the real `sh` and `tar` in an empty directory (the image's working directory), must
 * start the user's script among the user's files.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import {
  BatchClient,
  DescribeJobsCommand,
  ListJobsCommand,
  type TaskContainerProperties,
} from '@aws-sdk/client-batch';
import { CreateBucketCommand, GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { DescribeTrainingJobCommand, SageMakerClient } from '@aws-sdk/client-sagemaker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configureClients } from '../../functions/shared/container.js';
import { ENV } from '../../functions/shared/env-names.js';
import { archiveKey, ownerPrefix } from '../../functions/workspaces/bucket.js';
import { ExitCode } from '../../lib/cli/errors.js';
import { nodeHttpTransport } from '../../lib/cli/http-transport.js';
import { LOCAL_TABLE_NAME } from '../../lib/local/server.js';
import { validateResponses } from '../helpers/openapi-validator.js';
import { runTxs } from '../helpers/real-time-cli.js';
import { type ApiGateway, startApiGateway } from './api-gateway.js';
import { MOTO_CREDENTIALS, MOTO_QUEUE, MOTO_SAGEMAKER_ROLE } from './constants.js';
import { pointSdkAtMoto } from './helpers.js';
import { type S3Gate, startS3Gate } from './s3-gate.js';

const BUCKET = 'txs-moto-deployed-workspaces';
const JOB_ROLE = 'arn:aws:iam::123456789012:role/txs-job';
/** The callers: an access key id each (their AWS profile's), and the principal IAM authenticates it as. */
const ALICE = {
  profile: 'alice',
  accessKey: 'AKIAALICE0000000EXMP',
  principal: 'arn:aws:sts::123456789012:assumed-role/ml-team/alice',
  owner: 'arn:aws:iam::123456789012:role/ml-team',
};
const BOB = {
  profile: 'bob',
  accessKey: 'AKIABOB00000000EXMPL',
  principal: 'arn:aws:sts::123456789012:assumed-role/vision-team/bob',
  owner: 'arn:aws:iam::123456789012:role/vision-team',
};
/** The session token of the functions' (temporary) credentials. */
const FUNCTION_SESSION_TOKEN = 'IQoJb3JpZ2luX2VjEMotoSessionToken';
/** Someone signing with Alice's access key id but not her secret. */
const MALLORY = { ...ALICE, profile: 'mallory' };
type User = typeof ALICE;
const secretOf = (user: User) => `secret-of-${user.profile}`;

/** The environment variables this file sets for the functions and the CLI's credential chain. */
const SET_ENV = [
  ENV.tableName,
  ENV.dynamoDbEndpoint,
  ENV.schedulers,
  ENV.batchQueues,
  ENV.workspaceBucket,
  ENV.stackName,
  'AWS_SHARED_CREDENTIALS_FILE',
  'AWS_CONFIG_FILE',
] as const;

let api: ApiGateway;
let gate: S3Gate;
let s3: S3Client;
let batch: BatchClient;
let sageMaker: SageMakerClient;
let root: string;
let home: string;
/** The user's project: what `--workspace` names. */
let project: string;

const { transport: validating } = validateResponses(() => api?.url);

beforeAll(async () => {
  const clientConfig = pointSdkAtMoto();
  s3 = new S3Client({ ...clientConfig, forcePathStyle: true });
  batch = new BatchClient(clientConfig);
  sageMaker = new SageMakerClient(clientConfig);
  await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
  gate = await startS3Gate(clientConfig.endpoint);
  // The functions' SDK clients (S3, Batch, SageMaker) reach moto through the gate; the record table is moto's.
  process.env.AWS_ENDPOINT_URL = gate.url;
  process.env[ENV.tableName] = LOCAL_TABLE_NAME;
  process.env[ENV.dynamoDbEndpoint] = clientConfig.endpoint;
  process.env[ENV.schedulers] = 'aws_batch,aws_sagemaker';
  process.env[ENV.batchQueues] = MOTO_QUEUE;
  process.env[ENV.workspaceBucket] = BUCKET;
  process.env[ENV.stackName] = 'TxsMotoE2e';
  configureClients(undefined);

  root = await mkdtemp(join(tmpdir(), 'txs-moto-deployed-'));
  home = join(root, 'home');
  await mkdir(home);
  // Credentials come from profiles, as on a user's machine and not from the environment: each user's `txs`
  // signs with their own (`AWS_PROFILE=alice txs …`), the functions' clients use the default profile (moto's).
  const credentials = join(root, 'credentials');
  const profile = (name: string, key: string, secret: string, token?: string) =>
    `[${name}]\naws_access_key_id = ${key}\naws_secret_access_key = ${secret}\n${token === undefined ? '' : `aws_session_token = ${token}\n`}`;
  await writeFile(
    credentials,
    [
      // A Lambda function's credentials are temporary: its presigned URLs carry the session token.
      profile(
        'default',
        MOTO_CREDENTIALS.accessKeyId,
        MOTO_CREDENTIALS.secretAccessKey,
        FUNCTION_SESSION_TOKEN,
      ),
      ...[ALICE, BOB].map((u) => profile(u.profile, u.accessKey, secretOf(u))),
      // Alice's access key id with a secret that is not hers.
      profile(MALLORY.profile, ALICE.accessKey, 'not-alice-s-secret'),
    ].join('\n'),
  );
  await writeFile(join(root, 'config'), '');
  process.env.AWS_SHARED_CREDENTIALS_FILE = credentials;
  process.env.AWS_CONFIG_FILE = join(root, 'config');
  delete process.env.AWS_ACCESS_KEY_ID;
  delete process.env.AWS_SECRET_ACCESS_KEY;
  api = await startApiGateway(
    Object.fromEntries(
      [ALICE, BOB].map((u) => [u.accessKey, { secretKey: secretOf(u), principal: u.principal }]),
    ),
  );

  project = join(root, 'project');
  await mkdir(join(project, 'data'), { recursive: true });
  await writeFile(
    join(project, 'train.py'),
    [
      'import os',
      'with open(os.path.join("data", "greeting.txt")) as f:',
      '    print("train.py read:", f.read().strip())',
      'print("files:", sorted(os.listdir(".")))',
      'print("run.sh executable:", os.access("run.sh", os.X_OK))',
      '',
    ].join('\n'),
  );
  await writeFile(join(project, 'data', 'greeting.txt'), 'hello from the workspace\n');
  await writeFile(join(project, 'run.sh'), '#!/bin/sh\necho run.sh\n');
  await chmod(join(project, 'run.sh'), 0o755);
  // Never shipped (docs/workspaces.md: what goes in).
  await mkdir(join(project, '__pycache__'));
  await writeFile(join(project, '__pycache__', 'train.cpython-312.pyc'), 'bytecode');
});

afterAll(async () => {
  await api?.close();
  await gate?.close();
  s3?.destroy();
  batch?.destroy();
  sageMaker?.destroy();
  for (const name of SET_ENV) delete process.env[name];
  pointSdkAtMoto();
  configureClients(undefined);
  if (root !== undefined) await rm(root, { recursive: true, force: true });
});

/** Every exchange `txs` sent, as `METHOD host/path` (API requests and S3 uploads alike). */
const sent: string[] = [];
/** The URLs `txs` uploaded to. */
const uploadUrls: URL[] = [];

/** `txs args…` run by `user` from the project's parent directory, against the deployed API. */
function txs(user: User, ...args: string[]) {
  return runTxs(args, {
    env: {
      TXS_ENDPOINT: api.url,
      TXS_SIGV4: '1',
      AWS_REGION: 'us-east-1',
      AWS_PROFILE: user.profile,
      XDG_CACHE_HOME: join(home, `cache-${user.profile}`),
    },
    cwd: root,
    homeDir: home,
    transport: async (exchange) => {
      sent.push(`${exchange.method} ${exchange.url.host}${exchange.url.pathname}`);
      if (exchange.method === 'PUT') uploadUrls.push(exchange.url);
      // API Gateway's own refusal of a bad signature is not an answer of the API's contract.
      return user === MALLORY ? nodeHttpTransport(exchange) : validating(exchange);
    },
  });
}

/** `txs run` of the project's `python train.py` on aws_batch, with `extra` options before the component. */
function runOnBatch(user: User, workspace: string, ...extra: string[]) {
  return txs(
    user,
    'run',
    '-s',
    'aws_batch',
    '--workspace',
    workspace,
    '-cfg',
    `queue=${MOTO_QUEUE}`,
    '-cfg',
    `job_role_arn=${JOB_ROLE}`,
    ...extra,
    'utils.sh',
    'python',
    'train.py',
  );
}

/**
 * Runs a job's stored `command` as its container would, in an empty directory standing for the image's
 * working directory, with the archive `bytes` where the platform put it: `archiveInJob`, the path the
 * command names, becomes a file of a scratch directory (the task volume, the input channel). The image's
 * `python` is this machine's python3 (the suite's).
 *
 * @returns what the command printed.
 */
async function runInJob(command: readonly string[], archiveInJob: string, bytes: Buffer): Promise<string> {
  expect(command.filter((arg) => arg === archiveInJob)).toHaveLength(1);
  const scratch = await mkdtemp(join(root, 'job-'));
  const [workdir, volume, bin] = ['workdir', 'volume', 'bin'].map((name) => join(scratch, name)) as [
    string,
    string,
    string,
  ];
  for (const dir of [workdir, volume, bin]) await mkdir(dir);
  const archive = join(volume, basename(archiveInJob));
  await writeFile(archive, bytes);
  await writeFile(join(bin, 'python'), `#!/bin/sh\nexec ${process.env.TXS_MOTO_PYTHON ?? 'python3'} "$@"\n`);
  await chmod(join(bin, 'python'), 0o755);
  const [file = '', ...args] = command.map((arg) => (arg === archiveInJob ? archive : arg));
  const { stdout } = await promisify(execFile)(file, args, {
    cwd: workdir,
    env: { PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}` },
  });
  return stdout;
}

/** What train.py prints when it starts in the workspace. */
const TRAIN_OUTPUT =
  "train.py read: hello from the workspace\nfiles: ['data', 'run.sh', 'train.py']\nrun.sh executable: True\n";

/** The handle `txs run` printed (its last stdout line). */
function handleOf(out: string): string {
  const handle = out.trim().split('\n').at(-1) ?? '';
  expect(handle).toMatch(/^aws_(batch|sagemaker):\/\//);
  return handle;
}

/** The archive `txs` cached for the project: the one file of the cache's archive directory. */
async function cachedArchive(user: User): Promise<Buffer> {
  const dir = join(home, `cache-${user.profile}`, 'txs', 'workspaces');
  const archives: string[] = [];
  const walk = async (path: string): Promise<void> => {
    for (const entry of await readdir(path, { withFileTypes: true })) {
      if (entry.isDirectory()) await walk(join(path, entry.name));
      else if (entry.name.endsWith('.tar.gz')) archives.push(join(path, entry.name));
    }
  };
  await walk(dir);
  expect(archives).toHaveLength(1);
  return readFile(archives[0] as string);
}

async function objectBytes(bucket: string, key: string): Promise<Buffer> {
  const object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return Buffer.from(await (object.Body?.transformToByteArray() ?? []));
}

/** The Batch job `txs run` submitted for `handle`, as Batch describes it (with its node properties). */
async function batchJobOf(handle: string) {
  const appId = handle.slice(handle.lastIndexOf('/') + 1);
  const jobName = appId.slice(appId.indexOf(':') + 1);
  const { jobSummaryList } = await batch.send(
    new ListJobsCommand({ jobQueue: MOTO_QUEUE, filters: [{ name: 'JOB_NAME', values: [jobName] }] }),
  );
  expect(jobSummaryList).toHaveLength(1);
  const { jobs } = await batch.send(new DescribeJobsCommand({ jobs: [jobSummaryList?.[0]?.jobId ?? ''] }));
  const job = jobs?.[0];
  if (job === undefined) throw new Error(`Batch does not describe ${jobName}`);
  return job;
}

describe('txs run --workspace against a deployed stack (moto)', () => {
  let sha256: string;
  let archive: Buffer;
  let handle: string;
  let containers: TaskContainerProperties[];
  /** Where `txs` sends API requests: the stand-in's host and stage. */
  const apiHost = () => new URL(api.url).host + new URL(api.url).pathname;
  const aliceUri = () => `s3://${BUCKET}/${archiveKey(ALICE.owner, sha256)}`;

  it('dry-runs without uploading: the request fetches the caller’s archive, not uploaded yet', async () => {
    const dryrun = await runOnBatch(ALICE, 'project', '--dryrun');
    expect(dryrun.code, dryrun.err).toBe(0);
    sha256 = /^workspace: ([0-9a-f]{64})$/m.exec(dryrun.out)?.[1] ?? '';
    expect(dryrun.out).toContain(`fetched by the job from ${aliceUri()} (a run uploads it first)`);
    expect(sent).toEqual([`POST ${apiHost()}/v1/dryrun`]);
    expect(gate.received.filter((r) => r.startsWith('PUT '))).toEqual([]);
  });

  it('packs, uploads straight to S3 under the caller’s owner prefix, and submits the job in the workspace', async () => {
    sent.length = 0;
    const run = await runOnBatch(ALICE, 'project');
    expect(run.code, run.err).toBe(0);
    handle = handleOf(run.out);
    archive = await cachedArchive(ALICE);
    expect(createHash('sha256').update(archive).digest('hex')).toBe(sha256);
    expect(run.err).toContain(`uploaded workspace ${sha256}`);

    // One offer, one PUT of the archive straight to S3 (never through the API), one run; all as Alice.
    expect(sent).toEqual([
      `POST ${apiHost()}/v1/workspaces`,
      `PUT ${new URL(gate.url).host}/${BUCKET}/${archiveKey(ALICE.owner, sha256)}`,
      `POST ${apiHost()}/v1/apps`,
    ]);
    expect(uploadUrls.at(-1)?.searchParams.get('X-Amz-Security-Token')).toBe(FUNCTION_SESSION_TOKEN);
    expect(new Set(api.admitted.map((a) => a.principal))).toEqual(new Set([ALICE.principal]));
    expect(gate.refused).toEqual([]);

    // S3 holds exactly the archive, under Alice's owner prefix and nowhere else.
    const { Contents } = await s3.send(new ListObjectsV2Command({ Bucket: BUCKET }));
    expect(Contents?.map((object) => object.Key)).toEqual([archiveKey(ALICE.owner, sha256)]);
    expect(archiveKey(ALICE.owner, sha256).startsWith(ownerPrefix(ALICE.owner))).toBe(true);
    expect((await objectBytes(BUCKET, archiveKey(ALICE.owner, sha256))).equals(archive)).toBe(true);
  });

  it('stores the job definition Batch runs: the fetch container copies that key, the main container unpacks it first', async () => {
    const job = await batchJobOf(handle);
    // The stack's own definition (the Run role may register only names with the stack's prefix).
    expect(job.jobDefinition).toMatch(/:job-definition\/TxsMotoE2e_sh-[a-z0-9]+:1$/);
    const ranges = job.nodeProperties?.nodeRangeProperties ?? [];
    expect(ranges).toHaveLength(1);
    const task = ranges[0]?.ecsProperties?.taskProperties?.[0];
    expect(task?.taskRoleArn).toBe(JOB_ROLE);
    expect(task?.volumes).toEqual([{ name: 'txs-workspace' }]);
    containers = task?.containers ?? [];
    expect(containers.map((c) => c.name)).toEqual(['workspace-fetch', 'main']);
    const [fetch, main] = containers;
    expect(fetch).toEqual({
      name: 'workspace-fetch',
      image: 'public.ecr.aws/aws-cli/aws-cli:2.31.23',
      essential: false,
      command: ['s3', 'cp', '--only-show-errors', aliceUri(), `/txs-workspace/${sha256}.tar.gz`],
      mountPoints: [{ sourceVolume: 'txs-workspace', containerPath: '/txs-workspace', readOnly: false }],
      logConfiguration: { logDriver: 'awslogs' },
    });
    expect(main).toMatchObject({
      essential: true,
      image: 'ghcr.io/pytorch/torchx:0.7.0',
      command: [
        'sh',
        '-c',
        'tar -xzf "$0" && exec "$@"',
        `/txs-workspace/${sha256}.tar.gz`,
        'sh',
        '-c',
        'python train.py',
      ],
      mountPoints: [{ sourceVolume: 'txs-workspace', containerPath: '/txs-workspace', readOnly: true }],
      dependsOn: [{ containerName: 'workspace-fetch', condition: 'SUCCESS' }],
    });
  });

  it('starts the Batch job among the user’s files: the fetched object, unpacked by the stored command with sh and tar', async () => {
    const [fetch, main] = containers;
    // What the fetch container copies (`aws s3 cp SOURCE DESTINATION`), read from S3 as it would.
    const [, , , source = '', destination = ''] = fetch?.command ?? [];
    const { bucket = '', key = '' } = /^s3:\/\/(?<bucket>[^/]+)\/(?<key>.+)$/.exec(source)?.groups ?? {};
    const fetched = await objectBytes(bucket, key);
    expect(fetched.equals(archive)).toBe(true);
    expect(await runInJob(main?.command ?? [], destination, fetched)).toBe(TRAIN_OUTPUT);
  });

  it('shows the workspace in txs status and txs describe, and describes the role as it was given', async () => {
    const status = await txs(ALICE, 'status', handle);
    expect(status.code, status.err).toBe(0);
    expect(status.out).toContain(`workspace: ${sha256} (3 files,`);
    const described = await txs(ALICE, 'describe', handle);
    expect(described.code, described.err).toBe(0);
    expect(described.out).toContain(`# workspace: ${sha256} (3 files,`);
    expect(described.out).toMatch(/entrypoint: sh\n\s+args:\n\s+- -c\n\s+- python train.py\n/);
    expect(described.out).not.toContain('tar -xzf');
    // Asked again, Batch (moto without Docker: its jobs end at submission) moves the record on; the record
    // keeps its workspace through the transition.
    const refreshed = await txs(ALICE, 'status', '--refresh', handle);
    expect(refreshed.code, refreshed.err).toBe(0);
    expect(refreshed.out).toContain('State: SUCCEEDED');
    expect(refreshed.out).toContain(`workspace: ${sha256} (3 files,`);
    const json = await txs(ALICE, 'status', '--json', handle);
    expect(JSON.parse(json.out)).toMatchObject({
      owner: ALICE.owner,
      workspace: { sha256, size: archive.length, fileCount: 3 },
    });
  });

  it('refuses another owner’s run naming the same sha256 (400 naming workspace.sha256): their prefix holds nothing', async () => {
    sent.length = 0;
    const run = await runOnBatch(BOB, `sha256:${sha256}`);
    expect(run.code).toBe(ExitCode.USAGE);
    expect(run.err).toContain(`workspace.sha256: no workspace archive ${sha256} uploaded by you`);
    expect(sent).toEqual([`POST ${apiHost()}/v1/apps`]);
    expect(api.admitted.at(-1)?.principal).toBe(BOB.principal);
    const listed = await s3.send(
      new ListObjectsV2Command({ Bucket: BUCKET, Prefix: ownerPrefix(BOB.owner) }),
    );
    expect(listed.Contents ?? []).toEqual([]);
  });

  it('fails Bob’s dry run naming the same sha256 as his run would fail, instead of saying the server holds it', async () => {
    sent.length = 0;
    const dryrun = await runOnBatch(BOB, `sha256:${sha256}`, '--dryrun');
    expect(dryrun.code).toBe(ExitCode.USAGE);
    expect(dryrun.out).not.toContain('the server holds');
    expect(dryrun.err).toContain(`workspace.sha256: you have not uploaded the workspace archive ${sha256}`);
    expect(dryrun.err).toContain('hint: upload it with `txs workspace DIR`');
    expect(sent).toEqual([`POST ${apiHost()}/v1/dryrun`]);
    // Alice's dry run of her own archive names where her job fetches it.
    const alice = await runOnBatch(ALICE, `sha256:${sha256}`, '--dryrun');
    expect(alice.code, alice.err).toBe(0);
    expect(alice.out).toContain(`workspace: ${sha256} (uploaded; fetched by the job from ${aliceUri()})`);
  });

  it('has Bob upload his own copy of the same tree, under his prefix, which his job fetches', async () => {
    sent.length = 0;
    const run = await runOnBatch(BOB, 'project');
    expect(run.code, run.err).toBe(0);
    expect(run.err).toContain(`uploaded workspace ${sha256}`);
    expect(sent[1]).toBe(`PUT ${new URL(gate.url).host}/${BUCKET}/${archiveKey(BOB.owner, sha256)}`);
    const job = await batchJobOf(handleOf(run.out));
    const fetch =
      job.nodeProperties?.nodeRangeProperties?.[0]?.ecsProperties?.taskProperties?.[0]?.containers?.[0];
    expect(fetch?.command?.[3]).toBe(`s3://${BUCKET}/${archiveKey(BOB.owner, sha256)}`);
  });

  it('is refused by IAM with a signature that does not match (exit 4), with nothing uploaded or run', async () => {
    sent.length = 0;
    const objects = await s3.send(new ListObjectsV2Command({ Bucket: BUCKET }));
    const run = await runOnBatch(MALLORY, 'project');
    expect(run.code).toBe(ExitCode.AUTH);
    expect(api.refused).toHaveLength(1);
    expect(run.err).toContain(
      'refused the request (HTTP 403): The request signature we calculated does not match the signature you provided.',
    );
    expect(sent).toEqual([`POST ${apiHost()}/v1/workspaces`]);
    expect((await s3.send(new ListObjectsV2Command({ Bucket: BUCKET }))).Contents).toEqual(objects.Contents);
  });

  it('sends no bytes for a second run of the unchanged tree: one offer answered stored, then the run', async () => {
    sent.length = 0;
    const puts = gate.received.filter((r) => r.startsWith('PUT ')).length;
    const run = await runOnBatch(ALICE, 'project');
    expect(run.code, run.err).toBe(0);
    expect(run.err).not.toContain('uploaded workspace');
    expect(sent).toEqual([`POST ${apiHost()}/v1/workspaces`, `POST ${apiHost()}/v1/apps`]);
    expect(gate.received.filter((r) => r.startsWith('PUT ')).length).toBe(puts);
    const second = await batchJobOf(handleOf(run.out));
    const task = second.nodeProperties?.nodeRangeProperties?.[0]?.ecsProperties?.taskProperties?.[0];
    expect(task?.containers?.map((c) => c.command)).toEqual(containers.map((c) => c.command));
  });

  it('dry-runs an uploaded workspace as already uploaded, uploading nothing', async () => {
    sent.length = 0;
    const dryrun = await runOnBatch(ALICE, 'project', '--dryrun');
    expect(dryrun.code, dryrun.err).toBe(0);
    expect(dryrun.out).toContain(`fetched by the job from ${aliceUri()} (already uploaded)`);
    expect(sent).toEqual([`POST ${apiHost()}/v1/dryrun`]);
  });

  it('ships with txs workspace (the TorchX plugin’s way) and runs the hash it prints, sending the run alone', async () => {
    sent.length = 0;
    const shipped = await txs(ALICE, 'workspace', '--json', 'project');
    expect(shipped.code, shipped.err).toBe(0);
    expect(JSON.parse(shipped.out)).toEqual({ sha256, size: archive.length, fileCount: 3, uploaded: false });
    const run = await runOnBatch(ALICE, `sha256:${sha256}`);
    expect(run.code, run.err).toBe(0);
    expect(sent).toEqual([`POST ${apiHost()}/v1/workspaces`, `POST ${apiHost()}/v1/apps`]);
    const job = await batchJobOf(handleOf(run.out));
    const task = job.nodeProperties?.nodeRangeProperties?.[0]?.ecsProperties?.taskProperties?.[0];
    expect(task?.containers?.map((c) => c.command)).toEqual(containers.map((c) => c.command));
  });

  it('runs aws_sagemaker in the same archive: the input channel is that key, the entrypoint unpacks it', async () => {
    sent.length = 0;
    const run = await txs(
      ALICE,
      'run',
      '-s',
      'aws_sagemaker',
      '--workspace',
      'project',
      '-cfg',
      `role=${MOTO_SAGEMAKER_ROLE},output_path=s3://txs-moto/output/,instance_type=ml.m5.large`,
      'utils.sh',
      '--image',
      '123456789012.dkr.ecr.us-east-1.amazonaws.com/torchx:0.7.0',
      'python',
      'train.py',
    );
    expect(run.code, run.err).toBe(0);
    expect(sent).toEqual([`POST ${apiHost()}/v1/workspaces`, `POST ${apiHost()}/v1/apps`]);
    const sageMakerHandle = handleOf(run.out);
    const job = await sageMaker.send(
      new DescribeTrainingJobCommand({
        TrainingJobName: sageMakerHandle.slice(sageMakerHandle.lastIndexOf('/') + 1),
      }),
    );
    expect(job.InputDataConfig).toContainEqual({
      ChannelName: 'txs-workspace',
      DataSource: {
        S3DataSource: {
          S3DataType: 'S3Prefix',
          S3Uri: aliceUri(),
          S3DataDistributionType: 'FullyReplicated',
        },
      },
      InputMode: 'File',
    });
    const inChannel = `/opt/ml/input/data/txs-workspace/${sha256}.tar.gz`;
    const entrypoint = job.AlgorithmSpecification?.ContainerEntrypoint ?? [];
    expect(entrypoint).toEqual(['sh', '-c', 'tar -xzf "$0" && exec "$@"', inChannel, 'sh']);
    // SageMaker runs the entrypoint followed by the arguments, with the channel's object in its directory.
    const command = [...entrypoint, ...(job.AlgorithmSpecification?.ContainerArguments ?? [])];
    expect(
      await runInJob(command, inChannel, await objectBytes(BUCKET, archiveKey(ALICE.owner, sha256))),
    ).toBe(TRAIN_OUTPUT);
    const status = await txs(ALICE, 'status', sageMakerHandle);
    expect(status.out).toContain(`workspace: ${sha256} (3 files,`);
    const described = await txs(ALICE, 'describe', sageMakerHandle);
    expect(described.out).toMatch(/entrypoint: sh\n\s+args:\n\s+- -c\n\s+- python train.py\n/);
  });
});
