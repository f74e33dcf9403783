/**
 * slurm with a workspace: the dry run names the archive and keeps TorchX's script and submission; the
 * submission unpacks the archive into job_dir (as the server sees the cluster's filesystem) before
 * slurmrestd is called, and the job runs there.
 */
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { materializeComponent } from '../../../lib/components/index.js';
import type { SlurmRequest } from '../../../lib/schedulers/slurm/index.js';
import { type JobWorkspace, ValidationError } from '../../../lib/specs/index.js';
import { response, slurmScheduler, type WireAnswer } from './helpers.js';

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'txs-slurm-ws-'));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const SHA = 'cd'.repeat(32);

/** A workspace whose archive (made by the system's tar) holds `files`. */
function workspaceOf(files: Record<string, string>): JobWorkspace {
  const src = tempDir();
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(join(src, name, '..'), { recursive: true });
    writeFileSync(join(src, name), content);
  }
  const archive = join(tempDir(), `${SHA}.tar.gz`);
  execFileSync('tar', ['-czf', archive, '-C', src, '.']);
  return { sha256: SHA, size: readFileSync(archive).length, fileCount: Object.keys(files).length, archive };
}

const ok = (body: unknown): WireAnswer => ({ status: 200, body });
const submitted = ok({ meta: {}, errors: [], job_id: 7, step_id: 'BATCH', job_submit_user_msg: '' });
const echo = () => materializeComponent('utils.echo', ['--msg', 'hi']);

function refusal(fn: () => unknown): ValidationError {
  try {
    fn();
  } catch (error) {
    if (error instanceof ValidationError) return error;
    throw error;
  }
  throw new Error('nothing was refused');
}

describe('slurm dry run with a workspace', () => {
  it("names the archive to unpack into job_dir and keeps TorchX's script and the job's working directory", () => {
    const { scheduler } = slurmScheduler();
    const workspace = workspaceOf({ 'train.py': 'print(1)\n' });
    const cfg = { job_dir: '/shared/jobs/run1' };
    const withWs = scheduler.submitDryrun(echo(), cfg, workspace).request;
    const without = scheduler.submitDryrun(echo(), cfg).request;
    expect(withWs.workspace).toEqual({ sha256: SHA, archive: workspace.archive });
    expect(without).not.toHaveProperty('workspace');
    expect(withWs.script).toBe(without.script);
    expect(withWs.slurmrestd).toEqual(without.slurmrestd);
    expect(withWs.slurmrestd.body.job?.current_working_directory).toBe('/shared/jobs/run1');
  });

  it('refuses a workspace without job_dir, naming cfg.job_dir and how to set it', () => {
    const { scheduler } = slurmScheduler();
    const error = refusal(() => scheduler.submitDryrun(echo(), {}, workspaceOf({ 'a.txt': 'a' })));
    expect(error.issues[0]?.path).toBe('cfg.job_dir');
    expect(error.message).toContain('-cfg job_dir=');
  });

  it('refuses an archive that is not on the server’s disk (an s3:// archive), naming workspace', () => {
    const { scheduler } = slurmScheduler();
    const workspace = { ...workspaceOf({ 'a.txt': 'a' }), archive: `s3://bucket/ws/${SHA}.tar.gz` };
    const error = refusal(() => scheduler.submitDryrun(echo(), { job_dir: '/shared/jobs/x' }, workspace));
    expect(error.issues[0]?.path).toBe('workspace');
    expect(error.message).toContain(`s3://bucket/ws/${SHA}.tar.gz`);
  });
});

describe('slurm submission with a workspace', () => {
  it('unpacks the archive into job_dir under the log root before submitting, so the job starts in it', async () => {
    const root = tempDir();
    mkdirSync(join(root, 'shared', 'jobs'), { recursive: true });
    const jobDir = join(root, 'shared', 'jobs', 'run1');
    let seenAtSubmit: string[] = [];
    const { scheduler, requests } = slurmScheduler({
      logRoot: root,
      answers: () => {
        seenAtSubmit = readdirSync(jobDir, { recursive: true }).map(String).sort();
        return submitted;
      },
    });
    const workspace = workspaceOf({ 'train.py': 'print(1)\n', 'conf/lr.yaml': 'lr: 0.1\n' });
    const dryrun = scheduler.submitDryrun(echo(), { job_dir: '/shared/jobs/run1' }, workspace);
    await scheduler.schedule(dryrun);
    expect(requests).toHaveLength(1);
    expect(seenAtSubmit).toEqual(['conf', 'conf/lr.yaml', 'train.py']);
    expect(readFileSync(join(jobDir, 'conf/lr.yaml'), 'utf8')).toBe('lr: 0.1\n');
    expect(readdirSync(join(root, 'shared', 'jobs'))).toEqual(['run1']);
  });

  it('refuses a job_dir that exists, submitting nothing and leaving the directory as it was', async () => {
    const root = tempDir();
    mkdirSync(join(root, 'jobs', 'taken'), { recursive: true });
    writeFileSync(join(root, 'jobs', 'taken', 'results.csv'), 'precious\n');
    const { scheduler, requests } = slurmScheduler({ logRoot: root, answers: [submitted] });
    const dryrun = scheduler.submitDryrun(
      echo(),
      { job_dir: '/jobs/taken' },
      workspaceOf({ 'results.csv': 'x' }),
    );
    const error = await scheduler.schedule(dryrun).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).issues[0]?.path).toBe('cfg.job_dir');
    expect(requests).toEqual([]);
    expect(readdirSync(join(root, 'jobs', 'taken'))).toEqual(['results.csv']);
    expect(readFileSync(join(root, 'jobs', 'taken', 'results.csv'), 'utf8')).toBe('precious\n');
  });

  it("refuses a job_dir whose parent does not exist (TorchX's os.mkdir), submitting nothing", async () => {
    const root = tempDir();
    const { scheduler, requests } = slurmScheduler({ logRoot: root, answers: [submitted] });
    const dryrun = scheduler.submitDryrun(
      echo(),
      { job_dir: '/no/such/run1' },
      workspaceOf({ 'a.txt': 'a' }),
    );
    const error = await scheduler.schedule(dryrun).catch((e: unknown) => e);
    expect((error as ValidationError).issues[0]?.path).toBe('cfg.job_dir');
    expect((error as ValidationError).message).toContain('parent directory');
    expect(requests).toEqual([]);
  });

  it('leaves neither job_dir nor a partial copy when the archive cannot be unpacked', async () => {
    const root = tempDir();
    const damaged = join(tempDir(), `${SHA}.tar.gz`);
    writeFileSync(damaged, 'not a gzip tar');
    const { scheduler, requests } = slurmScheduler({ logRoot: root, answers: [submitted] });
    const workspace: JobWorkspace = { sha256: SHA, size: 14, fileCount: 1, archive: damaged };
    const dryrun = scheduler.submitDryrun(echo(), { job_dir: '/run1' }, workspace);
    const error = await scheduler.schedule(dryrun).catch((e: unknown) => e);
    expect((error as ValidationError).issues[0]?.path).toBe('workspace');
    expect(requests).toEqual([]);
    expect(readdirSync(root)).toEqual([]);
  });

  it('removes the unpacked job_dir when slurmrestd refuses the job, so the same job_dir can be used again', async () => {
    const root = tempDir();
    const { scheduler } = slurmScheduler({
      logRoot: root,
      answers: [{ status: 500, body: response('submit-bad-partition') }],
    });
    const dryrun = scheduler.submitDryrun(
      echo(),
      { job_dir: '/run1', partition: 'nope' },
      workspaceOf({ 'a.txt': 'a' }),
    );
    const error = await scheduler.schedule(dryrun).catch((e: unknown) => e);
    expect((error as ValidationError).issues[0]?.path).toBe('cfg.partition');
    expect(existsSync(join(root, 'run1'))).toBe(false);
    expect(readdirSync(root)).toEqual([]);
  });

  it('submits without touching the filesystem when the request has no workspace', async () => {
    const root = tempDir();
    const { scheduler, requests } = slurmScheduler({ logRoot: root, answers: [submitted] });
    const dryrun = scheduler.submitDryrun(echo(), { job_dir: '/run1' });
    expect((dryrun.request as SlurmRequest).workspace).toBeUndefined();
    await scheduler.schedule(dryrun);
    expect(requests).toHaveLength(1);
    expect(readdirSync(root)).toEqual([]);
  });
});
