import { userInfo } from 'node:os';
import { describe, expect, it } from 'vitest';
import {
  awsBatchRunOpts,
  createAwsBatchScheduler,
  parseRetryRules,
  parseUlimits,
} from '../../../lib/schedulers/aws-batch/index.js';
import { InvalidRunConfigError, ValidationError } from '../../../lib/specs/index.js';
import { fakeBatchClient, fakeLogsClient } from './helpers.js';

function issuesOf(fn: () => unknown): { path: string; message: string }[] {
  try {
    fn();
  } catch (e) {
    if (e instanceof ValidationError) return [...e.issues];
    throw e;
  }
  throw new Error('expected a ValidationError');
}

describe('aws_batch run options', () => {
  it("declares TorchX's options in TorchX's order, the additions before the workspace options", () => {
    expect([...awsBatchRunOpts('alice')].map((o) => o.name)).toEqual([
      'queue',
      'user',
      'privileged',
      'share_id',
      'priority',
      'job_role_arn',
      'execution_role_arn',
      'ulimits',
      'timeout',
      'retry_rules',
      'propagate_tags',
      'log_group',
      'image_repo',
      'quiet',
    ]);
  });

  it('requires the queue and fills the defaults', () => {
    const opts = awsBatchRunOpts('alice');
    expect(() => opts.resolve({})).toThrow(InvalidRunConfigError);
    expect(opts.resolve({ queue: 'q' })).toEqual({
      queue: 'q',
      user: 'alice',
      privileged: false,
      share_id: null,
      priority: 0,
      job_role_arn: null,
      execution_role_arn: null,
      ulimits: null,
      timeout: null,
      retry_rules: null,
      propagate_tags: false,
      log_group: null,
      image_repo: null,
      quiet: false,
    });
  });

  it('accepts camelCase spellings', () => {
    const resolved = awsBatchRunOpts('alice').resolve({
      queue: 'q',
      shareId: 'team',
      jobRoleArn: 'arn:aws:iam::123456789012:role/job',
      propagateTags: true,
      logGroup: '/ml/jobs',
      retryRules: ['retry:exit_code:137'],
    });
    expect(resolved).toMatchObject({
      share_id: 'team',
      job_role_arn: 'arn:aws:iam::123456789012:role/job',
      propagate_tags: true,
      log_group: '/ml/jobs',
      retry_rules: ['retry:exit_code:137'],
    });
  });

  it('defaults the user to the scheduler default user, else the OS user', () => {
    const batch = { batchClient: fakeBatchClient(), logsClient: fakeLogsClient() };
    const withCaller = createAwsBatchScheduler({ sessionName: 't' }, { ...batch, defaultUser: 'caller' });
    const withoutCaller = createAwsBatchScheduler({ sessionName: 't' }, batch);
    expect(withCaller.runOpts().resolve({ queue: 'q' }).user).toBe('caller');
    expect(withoutCaller.runOpts().resolve({ queue: 'q' }).user).toBe(userInfo().username);
  });

  it('parses every option from a -cfg string, including ulimits and retry rules', () => {
    const opts = awsBatchRunOpts('alice');
    expect(
      opts.cfgFromStr(
        'queue=gpu,priority=5,share_id=team,timeout=3600,propagate_tags=true,' +
          'retry_rules=retry:status_reason:Host EC2*;exit:exit_code:*,ulimits=nofile:65536:65536;memlock:-1',
      ),
    ).toEqual({
      queue: 'gpu',
      priority: 5,
      share_id: 'team',
      timeout: 3600,
      propagate_tags: true,
      retry_rules: ['retry:status_reason:Host EC2*', 'exit:exit_code:*'],
      ulimits: { nofile: '65536:65536', memlock: '-1' },
    });
  });

  it('rejects a mistyped option naming it', () => {
    expect(() => awsBatchRunOpts('alice').cfgFromStr('queue=q,timeout=an hour')).toThrow(
      'Run option: timeout, must be an integer (e.g. 5), but was: an hour',
    );
  });
});

describe('parseUlimits', () => {
  it('turns name:soft:hard and name:limit into Batch ulimits sorted by name', () => {
    expect(parseUlimits({ nofile: '1024:65536', memlock: '-1', stack: '8192:-1' })).toEqual([
      { name: 'memlock', softLimit: -1, hardLimit: -1 },
      { name: 'nofile', softLimit: 1024, hardLimit: 65536 },
      { name: 'stack', softLimit: 8192, hardLimit: -1 },
    ]);
  });

  it('names each bad ulimit with what to do', () => {
    expect(
      issuesOf(() => parseUlimits({ files: '1', nofile: 'lots', nproc: '10:5', core: '1:2:3' })),
    ).toEqual([
      {
        path: 'cfg.ulimits.core',
        message:
          "'1:2:3' is not a limit; give soft:hard or one limit as integers, -1 for unlimited (e.g. 65536:65536)",
      },
      {
        path: 'cfg.ulimits.files',
        message:
          "unknown ulimit 'files'; use one of: core, cpu, data, fsize, locks, memlock, msgqueue, nice, nofile, nproc, rss, rtprio, rttime, sigpending, stack",
      },
      {
        path: 'cfg.ulimits.nofile',
        message:
          "'lots' is not a limit; give soft:hard or one limit as integers, -1 for unlimited (e.g. 65536:65536)",
      },
      {
        path: 'cfg.ulimits.nproc',
        message: 'the soft limit 10 exceeds the hard limit 5; swap or raise them',
      },
    ]);
  });
});

describe('parseRetryRules', () => {
  it('maps action:field:pattern to evaluateOnExit entries in order', () => {
    expect(
      parseRetryRules([
        'retry:exit_code:137',
        'RETRY:status_reason:Host EC2*',
        'exit:reason:CannotPullContainerError:*',
        'exit:exit_code:*',
      ]),
    ).toEqual([
      { onExitCode: '137', action: 'RETRY' },
      { onStatusReason: 'Host EC2*', action: 'RETRY' },
      { onReason: 'CannotPullContainerError:*', action: 'EXIT' },
      { onExitCode: '*', action: 'EXIT' },
    ]);
  });

  it('allows at most four rules because the exit-0 rule takes one of five slots', () => {
    expect(issuesOf(() => parseRetryRules(Array(5).fill('retry:exit_code:1')))).toEqual([
      {
        path: 'cfg.retry_rules',
        message:
          'has 5 rules; AWS Batch allows 5 evaluateOnExit entries and one is the "exit code 0 → EXIT" rule, so give at most 4',
      },
    ]);
  });

  it('names each malformed rule by its index', () => {
    expect(
      issuesOf(() =>
        parseRetryRules(['again:exit_code:1', 'retry:signal:9', 'retry:exit_code:1x', 'exit:reason:(oom)']),
      ),
    ).toEqual([
      {
        path: 'cfg.retry_rules.0',
        message:
          "'again:exit_code:1' must look like action:field:pattern with action retry or exit (e.g. retry:exit_code:137)",
      },
      {
        path: 'cfg.retry_rules.1',
        message:
          "'retry:signal:9' has field 'signal'; use exit_code, status_reason or reason (e.g. retry:exit_code:137)",
      },
      {
        path: 'cfg.retry_rules.2',
        message: "'1x' is not an exit-code pattern; use digits, optionally ending in * (e.g. 137 or 1*)",
      },
      {
        path: 'cfg.retry_rules.3',
        message:
          "'(oom)' may contain only letters, digits, periods, colons and spaces, optionally ending in *",
      },
    ]);
  });
});
