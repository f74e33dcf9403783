/**
 * The shape of each scheduler's app ids, checked where an id enters the API (the `{appId}` path parameter)
 * so that one spelling reaches one app and nothing malformed reaches the store or AWS. Derived from AWS's
 * name rules (`shared/reference/aws-facts.md`):
 *
 * - `aws_batch`: `<queue name>:<job name>`: the queue name is 1–128 letters, digits, `-` or `_`
 *   (CreateJobQueue); the job name 1–128 of the same, starting with a letter or digit (SubmitJob).
 * - `aws_sagemaker`: the training job name, 1–63 letters, digits and inner hyphens (CreateTrainingJob).
 * - `local_cwd`: `<app name>-<id>`, the name of the app's directory: a single path segment (not `.` or `..`,
 *   no `/` or `\`, at most 255 bytes).
 *
 * Every app id, of any scheduler, also satisfies `appIdProblem` from the specs (no `/`, `%`, whitespace,
 * control or format characters; at most 257 characters). The rules import only name patterns
 * (`aws-names.ts`), not the schedulers: the API functions check ids without loading scheduler code.
 *
 * @module
 */
import { appIdProblem, ValidationError } from '../specs/index.js';
import { JOB_NAME_PATTERN, QUEUE_NAME_PATTERN, TRAINING_JOB_NAME_PATTERN } from './aws-names.js';

/** One scheduler's app id rule. */
export interface AppIdRule {
  /** True when `appId` has the scheduler's shape. */
  test(appId: string): boolean;
  /** The shape, said as a fix. */
  readonly shape: string;
}

/**
 * True when `name` can be used as one directory name: non-empty, at most `maxBytes` UTF-8 bytes (255, the usual
 * file-name limit), no `/`, `\` or NUL, and not `.` or `..`. App ids and role names must pass, so no path
 * escapes the data directory.
 */
export function isSafePathSegment(name: string, maxBytes = 255): boolean {
  return (
    name.length > 0 &&
    Buffer.byteLength(name, 'utf8') <= maxBytes &&
    !/[/\\\0]/.test(name) &&
    name !== '.' &&
    name !== '..'
  );
}

const bare = (pattern: RegExp): string => pattern.source.replace(/^\^/, '').replace(/\$$/, '');

const BATCH_APP_ID = new RegExp(`^${bare(QUEUE_NAME_PATTERN)}:${bare(JOB_NAME_PATTERN)}$`);

/** App id rules by scheduler name. */
export const APP_ID_RULES: Readonly<Record<string, AppIdRule>> = {
  aws_batch: {
    test: (appId) => BATCH_APP_ID.test(appId),
    shape:
      '<queue name>:<job name> as in the handle, e.g. gpu-queue:train-k3x9 (letters, digits, "-" and "_"; ' +
      'the queue by name, not ARN)',
  },
  aws_sagemaker: {
    test: (appId) => TRAINING_JOB_NAME_PATTERN.test(appId),
    shape: 'the training job name as in the handle, e.g. train-k3x9 (1-63 letters, digits and inner hyphens)',
  },
  local_cwd: {
    test: (appId) => isSafePathSegment(appId),
    shape: '<app name>-<id> as in the handle, e.g. echo-k3x9 (one path segment: not "." or "..")',
  },
};

/**
 * Checks an app id from a request against the generic rule and its scheduler's rule (unknown schedulers get
 * the generic rule only; they answer 404 later).
 *
 * @throws ValidationError naming `appId`, with the expected shape.
 * @example
 * ```ts
 * checkAppId('local_cwd', 'echo-k3x9'); // passes
 * checkAppId('local_cwd', '../echo-k3x9'); // throws: appId must not contain "/"…
 * ```
 */
export function checkAppId(scheduler: string, appId: string): void {
  const rule = APP_ID_RULES[scheduler];
  const generic = appIdProblem(appId);
  if (generic === undefined && (rule === undefined || rule.test(appId))) return;
  const shape = rule ? `${scheduler} app ids are ${rule.shape}` : 'app ids are printed in handles';
  const problem = generic ?? 'does not have the shape of an app id of this scheduler';
  throw ValidationError.forField('appId', `${problem}: ${shape}; copy it from the handle \`txs list\` shows`);
}
