/**
 * AWS Batch app ids (`queue:jobName`) and queue matching, with no other dependency: the state-change
 * function uses them without loading the scheduler.
 *
 * @module
 */

/** An app id split into its queue and job name. */
export interface BatchAppId {
  /** Queue name or ARN, as given at submission. */
  queue: string;
  jobName: string;
}

/**
 * Splits `queue:jobName` at the last `:` (a queue ARN contains colons, a job name cannot); undefined when the
 * id has no `:` or an empty part.
 *
 * @example
 * ```ts
 * parseBatchAppId('arn:aws:batch:us-east-1:123456789012:job-queue/gpu:train-x1');
 * // { queue: 'arn:aws:batch:us-east-1:123456789012:job-queue/gpu', jobName: 'train-x1' }
 * ```
 */
export function parseBatchAppId(appId: string): BatchAppId | undefined {
  const idx = appId.lastIndexOf(':');
  if (idx <= 0 || idx === appId.length - 1) return undefined;
  return { queue: appId.slice(0, idx), jobName: appId.slice(idx + 1) };
}

/** True when `jobQueue` (an ARN, as Batch reports it) is the queue the app id names (a name or an ARN). */
export function sameQueue(jobQueue: string | undefined, queue: string): boolean {
  return jobQueue === queue || (jobQueue ?? '').endsWith(`/${queue}`);
}
