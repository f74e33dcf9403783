/**
 * The slurmrestd submission derived from TorchX's script (slurmrestd does not read `#SBATCH` lines), the run
 * options, and the `time` parser.
 */
import { describe, expect, it } from 'vitest';
import { materializeComponent } from '../../../lib/components/index.js';
import {
  applyAppIdEnv,
  type SlurmRequest,
  SUBMIT_PATH,
  slurmRunOpts,
  slurmTimeToMinutes,
} from '../../../lib/schedulers/slurm/index.js';
import { makeAppDef, makeResource, makeRole, ValidationError } from '../../../lib/specs/index.js';
import { SUFFIX, slurmScheduler } from './helpers.js';

function dryrun(app = materializeComponent('utils.echo', ['--msg', 'hi']), cfg = {}, options = {}) {
  const { scheduler } = slurmScheduler(options);
  return scheduler.submitDryrun(app, cfg).request as SlurmRequest;
}

describe('slurmRunOpts', () => {
  it("declares exactly TorchX 0.8.0dev0's options, in its order, none required", () => {
    const opts = [...slurmRunOpts()];
    expect(opts.map((o) => o.name)).toEqual([
      'partition',
      'time',
      'comment',
      'constraint',
      'mail-user',
      'mail-type',
      'job_dir',
      'qos',
    ]);
    expect(opts.every((o) => o.type === 'str' && !o.required && o.default === null)).toBe(true);
    expect(slurmRunOpts().get('partition')?.help).toBe('The partition to run the job in.');
  });
});

describe('slurmTimeToMinutes', () => {
  it.each([
    ['90', 90],
    ['5:30', 6],
    ['1:30:00', 90],
    ['2-0', 2880],
    ['1-2:3', 1563],
    ['1-0:0:1', 1441],
  ])('reads Slurm time %s as %i minutes', (time, minutes) => {
    expect(slurmTimeToMinutes(time)).toBe(minutes);
  });

  it('rejects anything else with a ValidationError naming cfg.time', () => {
    for (const bad of ['1h', '', '-1', '1:2:3:4', 'UNLIMITED']) {
      expect(() => slurmTimeToMinutes(bad)).toThrow(ValidationError);
    }
    expect(() => slurmTimeToMinutes('1h')).toThrow(/cfg\.time/);
  });
});

describe('SlurmScheduler translation to slurmrestd', () => {
  it('submits a single group as `job` with the script, the app id as wckey, the work dir and the environment', () => {
    const request = dryrun();
    expect(request.appId).toBe(`echo-${SUFFIX}`);
    expect(request.slurmrestd.method).toBe('POST');
    expect(request.slurmrestd.path).toBe(SUBMIT_PATH);
    expect(request.slurmrestd.body.jobs).toBeUndefined();
    expect(request.slurmrestd.body.job).toEqual({
      name: 'echo-0',
      requeue: true,
      wckey: `echo-${SUFFIX}`,
      current_working_directory: '/shared/torchx',
      environment: { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' },
      tasks_per_node: 1,
      cpus_per_task: 1,
      memory_per_node: 1024,
    });
    expect(request.cmd).toEqual(['sbatch', '--parsable']);
  });

  it('submits one `jobs` entry per replica of every role, with group options on each and job options on the first', () => {
    const app = makeAppDef({
      name: 'mix',
      roles: [
        makeRole({
          name: 'ps',
          image: '/x',
          entrypoint: 'ps',
          resource: makeResource({ cpu: 2, gpu: 0, memMB: 512 }),
        }),
        makeRole({
          name: 'w',
          image: '/x',
          entrypoint: 'w',
          numReplicas: 2,
          resource: makeResource({ cpu: 4, gpu: 2, memMB: 2048 }),
        }),
      ],
    });
    const cfg = {
      partition: 'gpu',
      time: '1:00:00',
      comment: 'c',
      'mail-type': 'END',
      constraint: 'a100',
      qos: 'hi',
      job_dir: '/jobs/1',
    };
    const { body } = dryrun(app, cfg).slurmrestd;
    expect(body.job).toBeUndefined();
    expect(body.jobs?.map((j) => j.name)).toEqual(['ps-0', 'w-0', 'w-1']);
    expect(body.jobs?.[0]).toMatchObject({
      comment: 'c',
      mail_type: 'END',
      partition: 'gpu',
      time_limit: 60,
    });
    expect(body.jobs?.[1]).toMatchObject({
      partition: 'gpu',
      time_limit: 60,
      constraints: 'a100',
      qos: 'hi',
      cpus_per_task: 4,
      memory_per_node: 2048,
      gpus_per_task: '2',
      tasks: 1,
      current_working_directory: '/jobs/1',
    });
    expect(body.jobs?.[1]?.comment).toBeUndefined();
    expect(body.jobs?.every((j) => j.wckey === `mix-${SUFFIX}`)).toBe(true);
  });

  it('requests --gpus-per-node for Slurm >= 24.11 when configured', () => {
    const app = materializeComponent('dist.ddp', ['-j', '1x1', '--gpu', '2', '--script', 't.py']);
    const request = dryrun(app, {}, { gpusPerNode: true });
    expect(request.script).toContain('--gpus-per-node=2');
    expect(request.script).not.toContain('--gpus-per-task');
    expect(request.slurmrestd.body.job?.gpus_per_node).toBe('2');
  });

  it('refuses a malformed time before anything is sent', () => {
    expect(() => dryrun(undefined, { time: 'soon' })).toThrow(/cfg\.time/);
    const { scheduler } = slurmScheduler();
    expect(() => scheduler.validate(materializeComponent('utils.echo', []), { time: 'soon' })).toThrow(
      ValidationError,
    );
  });

  it('refuses option values with line breaks, which would inject lines into the script', () => {
    expect(() => dryrun(undefined, { partition: 'debug\nrm -rf ~' })).toThrow(/cfg\.partition/);
    expect(() => dryrun(undefined, { comment: 'a\rb' })).toThrow(/cfg\.comment/);
  });

  it('refuses a relative job_dir or one with .. segments, naming cfg.job_dir', () => {
    for (const jobDir of ['jobs/run1', '/shared/../etc', '..']) {
      expect(() => dryrun(undefined, { job_dir: jobDir })).toThrow(/cfg\.job_dir/);
    }
    expect(
      dryrun(undefined, { job_dir: '/shared/run..1' }).slurmrestd.body.job?.current_working_directory,
    ).toBe('/shared/run..1');
  });

  it('keeps app names that are not wckey-safe out of the app id', () => {
    const app = makeAppDef({
      name: 'my app/v1',
      roles: [makeRole({ name: 'r', image: '', entrypoint: 'true' })],
    });
    expect(dryrun(app).appId).toBe(`my-app-v1-${SUFFIX}`);
  });

  it("renders the dry run as TorchX's repr: the command, then the script", () => {
    const { scheduler } = slurmScheduler();
    const info = scheduler.submitDryrun(materializeComponent('utils.echo', []), { comment: 'a b' });
    expect(info.format()).toMatch(
      /^sbatch --parsable --comment=a b \$SBATCH_SCRIPT\n\n#-{16}\n# SBATCH_SCRIPT\n#-{16}\n#!\/bin\/bash\n/,
    );
  });
});

describe('applyAppIdEnv', () => {
  it('shell-quotes each part and puts "$SLURM_JOB_ID" where ${app_id} was', () => {
    expect(applyAppIdEnv('x-${app_id}-y z')).toBe(`x-"$SLURM_JOB_ID"'-y z'`);
    expect(applyAppIdEnv('${app_id}')).toBe(`''"$SLURM_JOB_ID"''`);
  });
});
