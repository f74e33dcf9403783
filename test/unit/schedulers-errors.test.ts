import { describe, expect, it } from 'vitest';
import { toSchedulerError as batchError } from '../../lib/schedulers/aws-batch/sdk-errors.js';
import { toSchedulerError as sageMakerError } from '../../lib/schedulers/aws-sagemaker/sdk-errors.js';
import { BackendNotConfiguredError, sdkConfigurationError } from '../../lib/schedulers/index.js';

describe('sdkConfigurationError', () => {
  it('explains a missing region', () => {
    const error = sdkConfigurationError(new Error('Region is missing'), 'batch:SubmitJob');
    expect(error).toBeInstanceOf(BackendNotConfiguredError);
    expect(error?.message).toMatch(/^batch:SubmitJob needs an AWS region .* set AWS_REGION/);
    expect(error?.message).toContain('Dry runs work without them');
  });

  it('explains missing credentials', () => {
    const noCredentials = Object.assign(new Error('Could not load credentials from any providers'), {
      name: 'CredentialsProviderError',
    });
    expect(sdkConfigurationError(noCredentials, 'sagemaker:CreateTrainingJob')?.message).toMatch(
      /needs AWS credentials/,
    );
  });

  it('ignores other errors', () => {
    expect(sdkConfigurationError(new Error('boom'), 'x')).toBeUndefined();
    expect(sdkConfigurationError('text', 'x')).toBeUndefined();
  });

  it('is what both AWS schedulers report instead of a retryable backend error', () => {
    const missing = new Error('Region is missing');
    expect(batchError(missing, { service: 'batch', action: 'SubmitJob' })).toBeInstanceOf(
      BackendNotConfiguredError,
    );
    expect(sageMakerError(missing, 'sagemaker:CreateTrainingJob', 'training job x')).toBeInstanceOf(
      BackendNotConfiguredError,
    );
  });
});
