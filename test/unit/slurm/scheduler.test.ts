/**
 * SlurmScheduler and its slurmrestd client at the HTTP wire: a fake `fetch` answers with bodies recorded from
 * slurmrestd 22.05 (OpenAPI v0.0.38), including its HTTP 500s for bad tokens, unknown jobs and bad partitions.
 */
import { createHmac } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { materializeComponent } from '../../../lib/components/index.js';
import {
  BackendAccessDeniedError,
  BackendError,
  BackendNotConfiguredError,
  InvalidLogTokenError,
  UnknownReplicaError,
  UnknownRoleError,
} from '../../../lib/schedulers/index.js';
import {
  type SlurmJob,
  SlurmRestClient,
  SlurmScheduler,
  signSlurmJwt,
} from '../../../lib/schedulers/slurm/index.js';
import { ValidationError } from '../../../lib/specs/index.js';
import { fakeFetch, response, SUFFIX, slurmScheduler, type WireAnswer } from './helpers.js';

const APP_ID = `echo-${SUFFIX}`;
const ok = (body: unknown): WireAnswer => ({ status: 200, body });
const submitted = (jobId: number) =>
  ok({ meta: {}, errors: [], job_id: jobId, step_id: 'BATCH', job_submit_user_msg: '' });

/** The recorded heterogeneous job (ids 1 and 2, leader 1), marked as `appId`, with overrides. */
function hetJob(appId: string, overrides: Partial<SlurmJob> = {}): { jobs: SlurmJob[] } {
  const { jobs } = response('job-hetjob-failed') as { jobs: SlurmJob[] };
  return { jobs: jobs.map((j) => ({ ...j, wckey: appId, ...overrides })) };
}

describe('signSlurmJwt', () => {
  it('signs {exp, iat, sun} with HS256 as scontrol token does', () => {
    const key = Buffer.alloc(32, 1);
    const token = signSlurmJwt(key, 'alice', 1_700_000_000_500, 300);
    const [header = '', payload = '', signature = ''] = token.split('.');
    expect(JSON.parse(Buffer.from(header, 'base64url').toString())).toEqual({ alg: 'HS256', typ: 'JWT' });
    expect(JSON.parse(Buffer.from(payload, 'base64url').toString())).toEqual({
      exp: 1_700_000_300,
      iat: 1_700_000_000,
      sun: 'alice',
    });
    expect(signature).toBe(createHmac('sha256', key).update(`${header}.${payload}`).digest('base64url'));
  });
});

describe('SlurmScheduler at the slurmrestd wire', () => {
  it('submits the dry run body with the user and token headers, and returns the app id', async () => {
    const { scheduler, requests } = slurmScheduler({ answers: [submitted(42)] });
    const info = scheduler.submitDryrun(materializeComponent('utils.echo', []));
    expect(await scheduler.schedule(info)).toBe(APP_ID);
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({
      method: 'POST',
      url: 'http://slurm.test:6820/slurm/v0.0.38/job/submit',
      headers: { 'X-SLURM-USER-NAME': 'alice', 'X-SLURM-USER-TOKEN': 'token-1' },
    });
    expect(requests[0]?.body).toEqual(info.request.slurmrestd.body);
  });

  it('signs a fresh token from the JWT key for each call', async () => {
    const wire = fakeFetch([ok({ jobs: [] }), ok({ jobs: [] })]);
    let now = 1_700_000_000_000;
    const key = Buffer.alloc(32, 9);
    const client = new SlurmRestClient({
      url: 'http://h/',
      user: 'bob',
      auth: { jwtKey: key },
      fetch: wire.fetch,
      now: () => now,
    });
    await client.jobs();
    now += 60_000;
    await client.jobs();
    expect(wire.requests.map((r) => r.url)).toEqual([
      'http://h/slurm/v0.0.38/jobs',
      'http://h/slurm/v0.0.38/jobs',
    ]);
    expect(wire.requests[0]?.headers['X-SLURM-USER-TOKEN']).toBe(signSlurmJwt(key, 'bob', 1_700_000_000_000));
    expect(wire.requests[1]?.headers['X-SLURM-USER-TOKEN']).toBe(signSlurmJwt(key, 'bob', 1_700_000_060_000));
  });

  it('maps a rejected token (HTTP 500, error 5005 on submit, -1 on reads; 401 without one) to BackendAccessDenied', async () => {
    const info = slurmScheduler().scheduler.submitDryrun(materializeComponent('utils.echo', []));
    for (const answer of [
      { status: 500, body: response('submit-bad-token') },
      { status: 401, body: 'Authentication failure' },
    ]) {
      const { scheduler } = slurmScheduler({ answers: [answer] });
      await expect(scheduler.schedule(info)).rejects.toBeInstanceOf(BackendAccessDeniedError);
    }
    const { scheduler } = slurmScheduler({ answers: [{ status: 500, body: response('jobs-bad-token') }] });
    await expect(scheduler.list()).rejects.toThrow(/token is most likely invalid or expired/);
  });

  it('maps an unknown partition (HTTP 500, error 2000) to a validation error naming cfg.partition', async () => {
    const { scheduler } = slurmScheduler({
      answers: [{ status: 500, body: response('submit-bad-partition') }],
    });
    const error = await scheduler
      .submit(materializeComponent('utils.echo', []), { partition: 'nope' })
      .catch((e) => e);
    // Our own words as ValidationFailed, so the field reaches the caller (BackendValidation hides details).
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).code).toBe('ValidationFailed');
    expect((error as ValidationError).issues[0]?.path).toBe('cfg.partition');
  });

  it('maps a request no node can hold (error 2014) to a validation error naming the roles', async () => {
    const { scheduler } = slurmScheduler({
      answers: [{ status: 500, body: response('submit-unsatisfiable') }],
    });
    await expect(scheduler.submit(materializeComponent('utils.echo', []))).rejects.toThrow(/app\.roles/);
  });

  it('reports an unreachable slurmrestd and other 5xx as retryable BackendErrors', async () => {
    const down = new SlurmRestClient({
      url: 'http://h',
      user: 'u',
      auth: { token: 't' },
      fetch: async () => {
        throw new TypeError('fetch failed');
      },
    });
    const error = await down.jobs().catch((e) => e);
    expect(error).toBeInstanceOf(BackendError);
    expect((error as BackendError).retryable).toBe(true);
    const { client } = slurmScheduler({
      answers: [{ status: 503, body: { errors: [{ error: 'busy', error_number: 1 }] } }],
    });
    await expect(client.jobs()).rejects.toMatchObject({ retryable: true });
  });

  it('describes the job it submitted by id, and any app by its wckey in the listing', async () => {
    const { scheduler, requests } = slurmScheduler({
      answers: [submitted(1), ok(hetJob(APP_ID))],
    });
    await scheduler.schedule(scheduler.submitDryrun(materializeComponent('utils.echo', [])));
    const desc = await scheduler.describe(APP_ID);
    expect(desc?.state).toBe('FAILED');
    expect(requests[1]?.url).toBe('http://slurm.test:6820/slurm/v0.0.38/job/1');

    const listing = { jobs: [...hetJob('other-aaaaaaaaaaaa').jobs, ...hetJob(APP_ID).jobs] };
    const fresh = slurmScheduler({ answers: [ok(listing)] });
    const found = await fresh.scheduler.describe(APP_ID);
    expect(found?.rolesStatuses.map((r) => r.role)).toEqual(['a', 'b']);
    expect(fresh.requests[0]?.url).toBe('http://slurm.test:6820/slurm/v0.0.38/jobs');
  });

  it('answers undefined for an app Slurm no longer holds (unknown job id: HTTP 500, error 2017)', async () => {
    const { scheduler } = slurmScheduler({
      answers: [submitted(999), { status: 500, body: response('job-unknown') }, ok({ jobs: [] })],
    });
    await scheduler.schedule(scheduler.submitDryrun(materializeComponent('utils.echo', [])));
    expect(await scheduler.describe(APP_ID)).toBeUndefined();
    expect(await slurmScheduler().scheduler.describe('../etc')).toBeUndefined();
  });

  it('cancels the leader of a running job, and does nothing for a finished one', async () => {
    const running = hetJob(APP_ID, { job_state: 'RUNNING' });
    const { scheduler, requests } = slurmScheduler({
      answers: [ok(running), ok(running), ok({ meta: {}, errors: [] })],
    });
    await scheduler.cancel(APP_ID);
    expect(requests.map((r) => `${r.method} ${r.url.replace('http://slurm.test:6820', '')}`)).toEqual([
      'GET /slurm/v0.0.38/jobs',
      'GET /slurm/v0.0.38/job/1',
      'DELETE /slurm/v0.0.38/job/1',
    ]);
    const finished = slurmScheduler({ answers: [ok(hetJob(APP_ID))] });
    await finished.scheduler.cancel(APP_ID);
    expect(finished.requests).toHaveLength(1);
  });

  it('lists one app per heterogeneous job it launched, and none of the jobs it did not', async () => {
    const { jobs } = response('jobs') as { jobs: SlurmJob[] };
    const mine = hetJob(APP_ID, { job_state: 'RUNNING' }).jobs;
    const { scheduler } = slurmScheduler({ answers: [ok({ jobs: [...jobs, ...mine] })] });
    expect(await scheduler.list()).toEqual([
      { appId: APP_ID, state: 'RUNNING', appHandle: '<NOT_SET>', name: 'echo' },
    ]);
  });

  it('dry-runs without slurmrestd configuration and explains what to set for everything else', async () => {
    const scheduler = new SlurmScheduler({ sessionName: 'torchx' });
    const info = scheduler.submitDryrun(materializeComponent('utils.echo', []));
    expect(info.request.script).toContain('#SBATCH --job-name=echo-0');
    await expect(scheduler.schedule(info)).rejects.toBeInstanceOf(BackendNotConfiguredError);
    await expect(scheduler.describe(APP_ID)).rejects.toThrow(/TXS_SLURM_URL/);
  });
});

describe('SlurmScheduler logs', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'txs-slurm-logs-'));
    await writeFile(join(dir, 'slurm-1-b-0.out'), 'one\ntwo\nthree\npartial');
    await writeFile(join(dir, 'slurm-1-b-0.err'), 'oops\n');
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  function withJob(overrides: Partial<SlurmJob>) {
    const job = hetJob(APP_ID, { current_working_directory: dir, ...overrides });
    return slurmScheduler({ answers: () => ok(job) });
  }

  it("reads a replica's stdout and stderr files from the job's directory, stderr by default as in TorchX", async () => {
    const { scheduler } = withJob({});
    expect((await scheduler.readLogs(APP_ID, { role: 'b', streams: 'stdout' })).lines).toEqual([
      'one',
      'two',
      'three',
      'partial',
    ]);
    expect((await scheduler.readLogs(APP_ID, { role: 'b' })).lines).toEqual(['oops']);
  });

  it('pages by byte offset and holds back an unfinished line while the job runs', async () => {
    const { scheduler } = withJob({ job_state: 'RUNNING' });
    const first = await scheduler.readLogs(APP_ID, { role: 'b', streams: 'stdout', limit: 2 });
    expect(first).toMatchObject({ lines: ['one', 'two'], caughtUp: false });
    const second = await scheduler.readLogs(APP_ID, {
      role: 'b',
      streams: 'stdout',
      nextToken: first.nextToken as string,
    });
    expect(second).toMatchObject({ lines: ['three'], caughtUp: true });
    expect(second.nextToken).toBeDefined();
    await expect(
      scheduler.readLogs(APP_ID, { role: 'b', streams: 'stderr', nextToken: first.nextToken as string }),
    ).rejects.toBeInstanceOf(InvalidLogTokenError);
  });

  it('refuses the combined stream, unknown roles, out-of-range replicas and roles that leave the directory', async () => {
    const { scheduler } = withJob({});
    await expect(scheduler.readLogs(APP_ID, { role: 'b', streams: 'combined' })).rejects.toThrow(
      /use stdout or stderr/,
    );
    await expect(scheduler.readLogs(APP_ID, { role: 'c' })).rejects.toBeInstanceOf(UnknownRoleError);
    await expect(scheduler.readLogs(APP_ID, { role: 'b', replica: 1 })).rejects.toBeInstanceOf(
      UnknownReplicaError,
    );
    const outside = slurmScheduler({
      logRoot: dir,
      answers: () => ok(hetJob(APP_ID, { current_working_directory: '/../..' })),
    });
    await expect(outside.scheduler.readLogs(APP_ID, { role: 'b' })).rejects.toThrow(
      /outside the readable log root/,
    );
    const evil = withJob({ name: '../../etc/passwd-0' });
    await expect(evil.scheduler.readLogs(APP_ID, { role: '../../etc/passwd' })).rejects.toBeInstanceOf(
      UnknownRoleError,
    );
  });

  it('returns nothing yet for a pending job whose file does not exist', async () => {
    const { scheduler } = withJob({ job_state: 'PENDING', current_working_directory: join(dir, 'none') });
    const page = await scheduler.readLogs(APP_ID, { role: 'b', streams: 'stdout' });
    expect(page).toMatchObject({ lines: [], caughtUp: true });
    expect(page.nextToken).toBeDefined();
  });
});
