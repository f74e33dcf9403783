/**
 * Run options of the `aws_batch` scheduler: TorchX's options (queue, user, privileged, share_id, priority,
 * job_role_arn, execution_role_arn, image_repo, quiet) plus ulimits, timeout, retry_rules, propagate_tags and
 * log_group, and the parsers that turn the string encodings of `ulimits` and `retry_rules` into the Batch API
 * shapes.
 *
 * @module
 */
import { userInfo } from 'node:os';
import type { EvaluateOnExit, Ulimit } from '@aws-sdk/client-batch';
import {
  type Cfg,
  type FieldIssue,
  hasUnsafeNameCharacters,
  RunOpts,
  UNSAFE_NAME_MESSAGE,
  ValidationError,
} from '../../specs/index.js';
import { isIamRoleArn, QUEUE_NAME_PATTERN } from '../aws-names.js';

export { QUEUE_NAME_PATTERN };

/** The resolved run options of `aws_batch` (snake_case keys, defaults filled by `RunOpts.resolve`). */
export interface AwsBatchOpts extends Cfg {
  queue: string;
  user: string;
  privileged: boolean;
  share_id: string | null;
  priority: number;
  job_role_arn: string | null;
  execution_role_arn: string | null;
  ulimits: Record<string, string> | null;
  timeout: number | null;
  retry_rules: string[] | null;
  propagate_tags: boolean;
  log_group: string | null;
  image_repo: string | null;
  quiet: boolean;
}

/** The `ulimit` names Batch (ECS) accepts. */
export const ULIMIT_NAMES: readonly string[] = Object.freeze([
  'core',
  'cpu',
  'data',
  'fsize',
  'locks',
  'memlock',
  'msgqueue',
  'nice',
  'nofile',
  'nproc',
  'rss',
  'rtprio',
  'rttime',
  'sigpending',
  'stack',
]);

/** Smallest `timeout` Batch accepts (seconds). */
export const MIN_TIMEOUT_SECONDS = 60;
/** Highest scheduling priority Batch accepts. */
export const MAX_PRIORITY = 9999;
/** Most `evaluateOnExit` entries in a retry strategy; one is TorchX's "exit 0 → EXIT" rule. */
export const MAX_EVALUATE_ON_EXIT = 5;
/** Most user retry rules (the exit-0 rule takes one of Batch's five slots). */
export const MAX_RETRY_RULES = MAX_EVALUATE_ON_EXIT - 1;
/** Longest retry-rule pattern Batch accepts. */
export const MAX_RETRY_PATTERN_LENGTH = 512;

/** A Batch job queue ARN: `arn:<partition>:batch:<region>:<account>:job-queue/<name>`. */
export const QUEUE_ARN_PATTERN = /^arn:aws[a-z-]*:batch:[a-z0-9-]+:\d{12}:job-queue\/([A-Za-z0-9_-]{1,128})$/;
/** An ECR or registry repository for `image_repo`: no whitespace, control or format characters. */
const IMAGE_REPO_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:/@-]{0,254}$/;
/** A CloudWatch Logs group name: 1–512 letters, digits and `. - _ / #`. */
const LOG_GROUP_PATTERN = /^[.\-_/#A-Za-z0-9]{1,512}$/;

/**
 * The queue name of `queue` (a name, or the name inside a queue ARN); undefined when it is neither.
 *
 * @example
 * ```ts
 * queueNameOf('arn:aws:batch:us-east-1:123456789012:job-queue/gpu'); // 'gpu'
 * queueNameOf('gpu'); // 'gpu'
 * ```
 */
export function queueNameOf(queue: string): string | undefined {
  if (QUEUE_NAME_PATTERN.test(queue)) return queue;
  return QUEUE_ARN_PATTERN.exec(queue)?.[1];
}

/**
 * AWS's name rules for the resolved options, checked in the dry run so a value AWS would reject is refused
 * before anything is written or submitted: the queue (name or ARN), the role ARNs, the user tag's characters, the log
 * group, the share id and the image repository.
 *
 * @returns one issue per bad option (`cfg.<name>`), empty when all are fine.
 */
export function awsBatchOptionIssues(cfg: Readonly<AwsBatchOpts>): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const add = (key: string, message: string) => issues.push({ path: `cfg.${key}`, message });
  if (queueNameOf(cfg.queue) === undefined) {
    add(
      'queue',
      'must be a job queue name (1-128 letters, digits, "-" or "_") or a job queue ARN ' +
        '(arn:aws:batch:<region>:<account>:job-queue/<name>)',
    );
  }
  for (const key of ['job_role_arn', 'execution_role_arn'] as const) {
    const value = cfg[key];
    if (value !== null && !isIamRoleArn(value)) {
      add(key, 'must be an IAM role ARN such as arn:aws:iam::123456789012:role/my-role');
    }
  }
  if (hasUnsafeNameCharacters(cfg.user)) add('user', `becomes a tag value; it ${UNSAFE_NAME_MESSAGE}`);
  if (cfg.share_id !== null && !/^[A-Za-z0-9]{1,255}\*?$/.test(cfg.share_id)) {
    add('share_id', 'must be 1 to 255 letters and digits, optionally followed by *');
  }
  if (cfg.log_group !== null && !LOG_GROUP_PATTERN.test(cfg.log_group)) {
    add('log_group', 'must be 1 to 512 characters of letters, digits and . - _ / #');
  }
  if (cfg.image_repo !== null && !IMAGE_REPO_PATTERN.test(cfg.image_repo)) {
    add('image_repo', 'must be a repository such as 123456789012.dkr.ecr.us-east-1.amazonaws.com/my-repo');
  }
  return issues;
}

/**
 * The OS user name, as TorchX's `getpass.getuser()`; `unknown` where the OS has no entry for the process
 * (some containers).
 */
export function osUserName(): string {
  try {
    return userInfo().username;
  } catch {
    return process.env.USER ?? process.env.LOGNAME ?? 'unknown';
  }
}

/**
 * Declares the options of `aws_batch`, in TorchX's order with the additions before the workspace options.
 *
 * @param defaultUser the `user` default (the caller, as the runner knows it); the OS user when omitted.
 * @example
 * ```ts
 * awsBatchRunOpts('alice').resolve({ queue: 'gpu' }).user; // 'alice'
 * ```
 */
export function awsBatchRunOpts(defaultUser: string = osUserName()): RunOpts {
  return new RunOpts()
    .add('queue', {
      type: 'str',
      required: true,
      help: 'The AWS Batch job queue (name or ARN) to submit to.',
    })
    .add('user', {
      type: 'str',
      default: defaultUser,
      help: 'The user name to tag the job with (tag torchx.pytorch.org/user). Defaults to the caller.',
    })
    .add('privileged', {
      type: 'bool',
      default: false,
      help: 'Run the containers with elevated permissions, like `docker run --privileged`.',
    })
    .add('share_id', {
      type: 'str',
      help:
        'The fair-share identifier of the job. Set it if and only if the queue has a fair-share scheduling ' +
        'policy; it is also appended to the job name.',
    })
    .add('priority', {
      type: 'int',
      default: 0,
      help:
        'Scheduling priority within the share (0-9999, higher runs first). Only used with share_id on a ' +
        'queue with a fair-share policy.',
    })
    .add('job_role_arn', {
      type: 'str',
      help: 'ARN of the IAM role the containers assume for their own AWS calls.',
    })
    .add('execution_role_arn', {
      type: 'str',
      help: 'ARN of the IAM role the ECS agent assumes (image pulls, logs, secrets).',
    })
    .add('ulimits', {
      type: 'dict[str,str]',
      help:
        'Container ulimits as name:soft:hard or name:limit pairs, -1 for unlimited, e.g. ' +
        '`nofile:65536:65536;memlock:-1`. Names: core, cpu, data, fsize, locks, memlock, msgqueue, nice, ' +
        'nofile, nproc, rss, rtprio, rttime, sigpending, stack.',
    })
    .add('timeout', {
      type: 'int',
      help:
        'Attempt timeout in seconds (at least 60), counted from when an attempt starts running. Batch does ' +
        'not retry a timed-out attempt.',
    })
    .add('retry_rules', {
      type: 'list[str]',
      help:
        'Up to 4 retry rules `action:field:pattern` checked in order after a failed attempt; action is ' +
        '`retry` or `exit`, field is `exit_code`, `status_reason` or `reason`, pattern is a glob that may end ' +
        "in `*`. E.g. `retry:status_reason:Host EC2*;exit:exit_code:*`. Attempts come from the roles' " +
        'maxRetries.',
    })
    .add('propagate_tags', {
      type: 'bool',
      default: false,
      help: 'Propagate the job tags to the ECS tasks that run it.',
    })
    .add('log_group', {
      type: 'str',
      help: 'CloudWatch Logs group for the containers (awslogs-group); it must exist. Defaults to /aws/batch/job.',
    })
    .add('image_repo', {
      type: 'str',
      help:
        'Repository a local image (`sha256:...`) was pushed to; the image is referenced as ' +
        '<image_repo>:<hash>. torchx-serverless does not push images itself.',
    })
    .add('quiet', {
      type: 'bool',
      default: false,
      help: 'Accepted for compatibility with TorchX (image-build verbosity); has no effect.',
    });
}

function ulimitValue(raw: string): number | undefined {
  return /^-?\d+$/.test(raw.trim()) ? Number.parseInt(raw.trim(), 10) : undefined;
}

/**
 * Parses `ulimits` (`{nofile: '65536:65536', memlock: '-1'}`) into Batch `Ulimit`s, sorted by name.
 * A single number sets both limits; `-1` means unlimited.
 *
 * @throws ValidationError naming `cfg.ulimits.<name>` for an unknown name, a non-integer limit or a soft limit
 *   above the hard limit.
 * @example
 * ```ts
 * parseUlimits({ nofile: '1024:4096' }); // [{ name: 'nofile', softLimit: 1024, hardLimit: 4096 }]
 * ```
 */
export function parseUlimits(ulimits: Readonly<Record<string, string>>): Ulimit[] {
  const issues: FieldIssue[] = [];
  const result: Ulimit[] = [];
  for (const [name, raw] of Object.entries(ulimits).sort(([a], [b]) => a.localeCompare(b))) {
    const path = `cfg.ulimits.${name}`;
    if (!ULIMIT_NAMES.includes(name)) {
      issues.push({ path, message: `unknown ulimit '${name}'; use one of: ${ULIMIT_NAMES.join(', ')}` });
      continue;
    }
    const parts = raw.split(':');
    const soft = ulimitValue(parts[0] ?? '');
    const hard = parts.length === 1 ? soft : ulimitValue(parts[1] ?? '');
    if (parts.length > 2 || soft === undefined || hard === undefined || soft < -1 || hard < -1) {
      issues.push({
        path,
        message: `'${raw}' is not a limit; give soft:hard or one limit as integers, -1 for unlimited (e.g. 65536:65536)`,
      });
      continue;
    }
    if (hard !== -1 && (soft === -1 || soft > hard)) {
      issues.push({
        path,
        message: `the soft limit ${soft} exceeds the hard limit ${hard}; swap or raise them`,
      });
      continue;
    }
    result.push({ name, softLimit: soft, hardLimit: hard });
  }
  if (issues.length > 0) {
    throw new ValidationError(
      `cfg.ulimits: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`,
      issues,
    );
  }
  return result;
}

const RETRY_FIELDS = {
  exit_code: 'onExitCode',
  status_reason: 'onStatusReason',
  reason: 'onReason',
} as const;
type RetryField = keyof typeof RETRY_FIELDS;

const EXIT_CODE_PATTERN = /^(\d+\*?|\*)$/;
const REASON_PATTERN = /^[A-Za-z0-9.: \t]*\*?$/;

/**
 * Parses `retry_rules` (`['retry:exit_code:137', 'exit:status_reason:Essential container*']`) into Batch
 * `evaluateOnExit` entries, in the given order.
 *
 * @throws ValidationError naming `cfg.retry_rules.<index>` for a malformed rule, and `cfg.retry_rules` for
 *   more than {@link MAX_RETRY_RULES} rules.
 * @example
 * ```ts
 * parseRetryRules(['retry:exit_code:137']); // [{ onExitCode: '137', action: 'RETRY' }]
 * ```
 */
export function parseRetryRules(rules: readonly string[]): EvaluateOnExit[] {
  if (rules.length > MAX_RETRY_RULES) {
    throw ValidationError.forField(
      'cfg.retry_rules',
      `has ${rules.length} rules; AWS Batch allows ${MAX_EVALUATE_ON_EXIT} evaluateOnExit entries and one is the ` +
        `"exit code 0 → EXIT" rule, so give at most ${MAX_RETRY_RULES}`,
    );
  }
  const issues: FieldIssue[] = [];
  const result: EvaluateOnExit[] = [];
  rules.forEach((rule, i) => {
    const path = `cfg.retry_rules.${i}`;
    const first = rule.indexOf(':');
    const second = first < 0 ? -1 : rule.indexOf(':', first + 1);
    const action = first < 0 ? '' : rule.slice(0, first).trim().toLowerCase();
    const field =
      second < 0
        ? ''
        : rule
            .slice(first + 1, second)
            .trim()
            .toLowerCase();
    const pattern = second < 0 ? '' : rule.slice(second + 1);
    if (action !== 'retry' && action !== 'exit') {
      issues.push({
        path,
        message: `'${rule}' must look like action:field:pattern with action retry or exit (e.g. retry:exit_code:137)`,
      });
      return;
    }
    if (!Object.hasOwn(RETRY_FIELDS, field)) {
      issues.push({
        path,
        message: `'${rule}' has field '${field}'; use exit_code, status_reason or reason (e.g. ${action}:exit_code:137)`,
      });
      return;
    }
    if (pattern.length === 0 || pattern.length > MAX_RETRY_PATTERN_LENGTH) {
      issues.push({ path, message: `the pattern must have 1 to ${MAX_RETRY_PATTERN_LENGTH} characters` });
      return;
    }
    const isExitCode = field === 'exit_code';
    if (isExitCode ? !EXIT_CODE_PATTERN.test(pattern) : !REASON_PATTERN.test(pattern)) {
      issues.push({
        path,
        message: isExitCode
          ? `'${pattern}' is not an exit-code pattern; use digits, optionally ending in * (e.g. 137 or 1*)`
          : `'${pattern}' may contain only letters, digits, periods, colons and spaces, optionally ending in *`,
      });
      return;
    }
    result.push({
      [RETRY_FIELDS[field as RetryField]]: pattern,
      action: action === 'retry' ? 'RETRY' : 'EXIT',
    });
  });
  if (issues.length > 0) {
    throw new ValidationError(
      `cfg.retry_rules: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`,
      issues,
    );
  }
  return result;
}
