/**
 * Run options of the `slurm` scheduler: exactly TorchX's (`partition`, `time`, `comment`, `constraint`,
 * `mail-user`, `mail-type`, `job_dir`, `qos`), with TorchX's help text, and the parser of `time`.
 *
 * @module
 */
import { type Cfg, RunOpts, ValidationError } from '../../specs/index.js';

/** The resolved run options of `slurm` (TorchX's keys, hyphens included). */
export interface SlurmOpts extends Cfg {
  partition: string | null;
  time: string | null;
  comment: string | null;
  constraint: string | null;
  'mail-user': string | null;
  'mail-type': string | null;
  job_dir: string | null;
  qos: string | null;
}

/** Options that apply once to the whole job (TorchX `SBATCH_JOB_OPTIONS`, in the newest TorchX's order). */
export const SBATCH_JOB_OPTIONS = ['comment', 'mail-user', 'mail-type'] as const;
/** Options repeated on every heterogeneous group (TorchX `SBATCH_GROUP_OPTIONS`). */
export const SBATCH_GROUP_OPTIONS = ['partition', 'time', 'constraint', 'qos'] as const;

/**
 * Declares the options of `slurm`, in TorchX's order and with TorchX's help (verbatim, whitespace included).
 *
 * @example
 * ```ts
 * slurmRunOpts().resolve({ partition: 'gpu' }).time; // null
 * ```
 */
export function slurmRunOpts(): RunOpts {
  return new RunOpts()
    .add('partition', { type: 'str', help: 'The partition to run the job in.' })
    .add('time', {
      type: 'str',
      help:
        'The maximum time the job is allowed to run for. Formats:             "minutes", "minutes:seconds", ' +
        '"hours:minutes:seconds", "days-hours",             "days-hours:minutes" or "days-hours:minutes:seconds"',
    })
    .add('comment', { type: 'str', help: 'Comment to set on the slurm job.' })
    .add('constraint', { type: 'str', help: 'Constraint to use for the slurm job.' })
    .add('mail-user', { type: 'str', help: 'User to mail on job end.' })
    .add('mail-type', { type: 'str', help: 'What events to mail users on.' })
    .add('job_dir', {
      type: 'str',
      help:
        'The directory to place the job code and outputs. The\n            directory must not exist and will be ' +
        'created. To enable log\n            iteration, jobs will be tracked in ``.torchxslurmjobdirs``.\n            ',
    })
    .add('qos', { type: 'str', help: 'Quality of Service (QoS) to assign to the job.' });
}

const TIME_FORMATS =
  'use "minutes", "minutes:seconds", "hours:minutes:seconds", "days-hours", "days-hours:minutes" or ' +
  '"days-hours:minutes:seconds" (e.g. "90", "1:30:00", "2-0")';

/**
 * Converts a Slurm `--time` value into whole minutes (what slurmrestd's `time_limit` takes), rounding seconds
 * up as Slurm does.
 *
 * @throws ValidationError naming `cfg.time` for any other format.
 * @example
 * ```ts
 * slurmTimeToMinutes('1:30:00'); // 90
 * slurmTimeToMinutes('2-1'); // 2940
 * ```
 */
export function slurmTimeToMinutes(time: string): number {
  const match = /^(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?$/.exec(time.trim());
  if (!match) throw ValidationError.forField('cfg.time', `'${time}' is not a Slurm time; ${TIME_FORMATS}`);
  const [, days, a, b, c] = match;
  const n = (s: string | undefined) => (s === undefined ? 0 : Number.parseInt(s, 10));
  let minutes: number;
  if (days !== undefined) {
    // days-hours[:minutes[:seconds]]
    minutes = n(days) * 1440 + n(a) * 60 + n(b) + Math.ceil(n(c) / 60);
  } else if (c !== undefined) {
    minutes = n(a) * 60 + n(b) + Math.ceil(n(c) / 60); // hours:minutes:seconds
  } else if (b !== undefined) {
    minutes = n(a) + Math.ceil(n(b) / 60); // minutes:seconds
  } else {
    minutes = n(a); // minutes
  }
  return minutes;
}
