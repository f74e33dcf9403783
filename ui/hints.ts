/** The stuck-job hint: why a pending app waits, in plain words, and what to check. */
import type { AppResponse } from '../lib/specs/api.js';

/** Plain-word explanations of the schedulers' waiting reasons. */
const PATTERNS: Array<{ test: RegExp; say: string; check: string }> = [
  {
    test: /MISCONFIGURATION:JOB_RESOURCE_REQUIREMENT|no compute environment|cannot fit|resource requirement/i,
    say: 'No compute environment of the queue has instances big enough for this job’s resources.',
    check:
      'Compare the role’s cpu, memory and gpu with the compute environment’s instance types and max vCPUs, or pick a smaller resource.',
  },
  {
    test: /CE_.*INVALID|compute environment.*(invalid|disabled)|INVALID.*compute/i,
    say: 'The queue’s compute environment is invalid or disabled, so nothing can start.',
    check: 'Open the compute environment in the AWS Batch console and read its status reason.',
  },
  {
    test: /queue.*(disabled|invalid)|JOB_QUEUE/i,
    say: 'The job queue is disabled or invalid.',
    check: 'Enable the queue or fix it in the AWS Batch console.',
  },
  {
    test: /capacity|insufficient|InsufficientInstanceCapacity|ResourceLimitExceeded|quota/i,
    say: 'AWS has no capacity (or no quota) for the requested instances right now.',
    check: 'Check your service quotas for the instance type, try another type or region, or wait.',
  },
  {
    test: /dependen/i,
    say: 'The job waits for jobs it depends on.',
    check: 'Look at the state of the jobs it depends on.',
  },
];

/** Returns the hint for an app that is waiting to run, or undefined when it is not waiting. */
export function stuckHint(app: AppResponse): { reason: string; say: string; check: string } | undefined {
  const state = app.status.state;
  if (state !== 'PENDING' && state !== 'SUBMITTED' && state !== 'UNSUBMITTED') return undefined;
  const reasons = [
    app.status.stateReason?.text ?? '',
    app.status.msg,
    ...app.status.roles.flatMap((r) => r.replicas.map((x) => x.reason ?? '')),
    app.history?.at(-1)?.reason ?? '',
  ].filter((r) => r.trim() !== '');
  const reason = reasons[0] ?? '';
  for (const p of PATTERNS)
    if (p.test.test(reasons.join('\n'))) return { reason, say: p.say, check: p.check };
  if (state === 'UNSUBMITTED') {
    return {
      reason,
      say: 'The submission has not been confirmed by the scheduler yet.',
      check:
        'The reconciler settles it within minutes; refresh, or look for the job in the scheduler’s console.',
    };
  }
  const where =
    app.scheduler === 'aws_batch'
      ? 'the job queue’s compute environments (instance types, max vCPUs) in the AWS Batch console'
      : app.scheduler === 'aws_sagemaker'
        ? 'the training job in the SageMaker console and your instance quotas'
        : 'the scheduler';
  return {
    reason,
    say: reason
      ? `The scheduler says: ${reason}`
      : 'The scheduler has not started the job and gave no reason yet.',
    check: `Check ${where}.`,
  };
}
