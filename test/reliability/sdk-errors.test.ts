/** Regression: a SageMaker call that got no answer (timeout) is retryable, like Batch's and like a 5xx. */
import { describe, expect, it } from 'vitest';
import { toSchedulerError } from '../../lib/schedulers/aws-sagemaker/index.js';
import { BackendError } from '../../lib/schedulers/index.js';

describe('aws_sagemaker toSchedulerError', () => {
  it('maps a TimeoutError (no HTTP status) to a retryable BackendError', () => {
    const timeout = Object.assign(new Error('socket timed out'), { name: 'TimeoutError' });
    const error = toSchedulerError(timeout, 'sagemaker:CreateTrainingJob', 'training job t');
    expect(error).toBeInstanceOf(BackendError);
    expect((error as BackendError).retryable).toBe(true);
  });

  it('keeps a 400 it does not know non-retryable', () => {
    const rejected = Object.assign(new Error('bad'), {
      name: 'SomethingElse',
      $metadata: { httpStatusCode: 400 },
    });
    expect((toSchedulerError(rejected, 'sagemaker:X', 't') as BackendError).retryable).toBe(false);
  });
});
