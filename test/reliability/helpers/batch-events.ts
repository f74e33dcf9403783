/** Batch "Job State Change" EventBridge events for generated lifecycles (tests and benchmarks). */

/** An EventBridge envelope. */
export type Envelope = { source: string; 'detail-type': string; detail: Record<string, unknown> };

/** Epoch ms every generated job was created at. */
export const T0 = 1_767_000_000_000;

/** One Batch event for `jobName` in `status` after `attempts` finished attempts, at `time`. */
export function batchEvent(jobName: string, status: string, attempts: number, time: number): Envelope {
  const detail: Record<string, unknown> = {
    jobName,
    jobId: `id-${jobName}`,
    jobQueue: 'arn:aws:batch:us-east-1:123456789012:job-queue/ml-gpu-queue',
    status,
    attempts: Array.from({ length: attempts }, (_, i) => ({ container: { exitCode: 1 }, startedAt: T0 + i })),
    createdAt: T0,
  };
  if (['STARTING', 'RUNNING', 'SUCCEEDED', 'FAILED'].includes(status)) detail.startedAt = time;
  if (['SUCCEEDED', 'FAILED'].includes(status)) {
    detail.stoppedAt = time + 1;
    if (status === 'FAILED') detail.statusReason = 'Essential container in task exited';
  }
  return { source: 'aws.batch', 'detail-type': 'Batch Job State Change', detail };
}

/** One app's events in order: `attempts` attempts (all but the last retried), then the final state. */
export function batchLifecycle(jobName: string, attempts: number, final: 'SUCCEEDED' | 'FAILED'): Envelope[] {
  const events = [batchEvent(jobName, 'SUBMITTED', 0, T0), batchEvent(jobName, 'PENDING', 0, T0)];
  for (let a = 0; a < attempts; a++) {
    const t = T0 + (a + 1) * 1000;
    events.push(batchEvent(jobName, 'RUNNABLE', a, t), batchEvent(jobName, 'STARTING', a, t + 10));
    events.push(batchEvent(jobName, 'RUNNING', a, t + 20));
  }
  events.push(batchEvent(jobName, final, final === 'FAILED' ? attempts : attempts - 1, T0 + 100_000));
  return events;
}
