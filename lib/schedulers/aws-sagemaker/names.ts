/**
 * Training job names. SageMaker accepts 1–63 characters matching `^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$`
 * (letters, digits and inner hyphens), so TorchX-style names such as `torchx_utils_python` or `exp/run.v2`
 * are sanitised and truncated so that the random suffix always fits.
 *
 * @module
 */

/** Longest training job name. */
export const MAX_TRAINING_JOB_NAME_LENGTH = 63;

export { TRAINING_JOB_NAME_PATTERN } from '../aws-names.js';

/** Prefix used when a name has no letter or digit at all. */
export const FALLBACK_NAME_PREFIX = 'torchx';

/**
 * Turns any text into a valid name prefix: every character other than an ASCII letter, digit or hyphen
 * becomes `-`, runs of hyphens collapse to one, and leading/trailing hyphens are removed.
 *
 * @example
 * ```ts
 * sanitizeJobNamePrefix('torchx_utils_python'); // 'torchx-utils-python'
 * sanitizeJobNamePrefix('exp/run.v2');          // 'exp-run-v2'
 * ```
 */
export function sanitizeJobNamePrefix(text: string): string {
  return text
    .replace(/[^a-zA-Z0-9-]/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^-+|-+$/g, '');
}

/**
 * `<prefix>-<id>` as a valid training job name: the prefix is sanitised (see {@link sanitizeJobNamePrefix}),
 * falls back to `torchx` when nothing is left, and is cut so the whole name has at most 63 characters.
 *
 * @param id the unique suffix (letters and digits, at most 14 characters with TorchX's generator)
 * @example
 * ```ts
 * trainingJobName('torchx_utils_python', 't4rcs9x6sv1m'); // 'torchx-utils-python-t4rcs9x6sv1m'
 * ```
 */
export function trainingJobName(prefix: string, id: string): string {
  const suffix = sanitizeJobNamePrefix(id);
  const room = MAX_TRAINING_JOB_NAME_LENGTH - (suffix.length > 0 ? suffix.length + 1 : 0);
  const cleaned = sanitizeJobNamePrefix(prefix) || FALLBACK_NAME_PREFIX;
  const base = cleaned.slice(0, Math.max(room, 1)).replace(/-+$/, '') || FALLBACK_NAME_PREFIX.slice(0, room);
  return suffix.length > 0 ? `${base}-${suffix}` : base;
}
